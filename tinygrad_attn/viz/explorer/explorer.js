// The explorer page's behaviour: tabs, pan and zoom, folding modules, search, the node
// panel with heat maps, stepping through the backward pass, attention views.
// Everything it shows comes from the JSON in #tga-data; it loads nothing from anywhere.
(function () {
  "use strict";
  // A large page comes packed (gzip, then base64: see explore._page): its data and graph pictures
  // are unpacked here, with the browser's own DecompressionStream, before anything is drawn.
  var packed = document.getElementById("tga-packed");
  if (!packed) start(JSON.parse(document.getElementById("tga-data").textContent), {});
  else if (typeof DecompressionStream === "undefined") {
    document.getElementById("tga-panel").textContent = "This page is packed, and this browser cannot unpack it " +
      "(it needs DecompressionStream: Chrome 80, Firefox 113, Safari 16.4 or later).";
  } else {
    var bin = atob(packed.textContent.trim()), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text().then(function (t) {
      var p = JSON.parse(t), lazy = {};
      Object.keys(p.svg).forEach(function (k) {
        if (p.svg[k + "-overview"]) lazy[k] = p.svg[k]; // (behind its overview: parsed when first shown)
        else document.getElementById(k).innerHTML = p.svg[k];
      });
      start(p.data, lazy);
    });
  }

function start(DATA, lazy) {
  var SVGNS = "http://www.w3.org/2000/svg";
  var $ = function (sel, root) { return (root || document).querySelector(sel); };
  var $$ = function (sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); };

  function el(tag, attrs, kids) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") e.textContent = attrs[k]; else e.setAttribute(k, attrs[k]);
    });
    (kids || []).forEach(function (c) { e.appendChild(c); });
    return e;
  }
  function svgEl(tag, attrs) {
    var e = document.createElementNS(SVGNS, tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    return e;
  }
  function fmt(x) {
    if (x === 0) return "0";
    var a = Math.abs(x);
    return a >= 1e4 || a < 1e-3 ? x.toExponential(2) : String(+x.toPrecision(3));
  }

  // attention weights and gradients come as float16 bytes (see explore.f16): nested here as
  // [head][query] rows of numbers
  function fromF16(rec) {
    if (!rec) return null;
    var bin = atob(rec.b64), n = bin.length >> 1, flat = new Float32Array(n);
    for (var i = 0; i < n; i++) {
      var h = bin.charCodeAt(2 * i) | (bin.charCodeAt(2 * i + 1) << 8);
      var e = (h >> 10) & 31, f = h & 1023;
      var v = e === 0 ? f * Math.pow(2, -24) : e === 31 ? (f ? NaN : Infinity) : (1 + f / 1024) * Math.pow(2, e - 15);
      flat[i] = (h & 0x8000 ? -v : v) * rec.scale;
    }
    var shp = rec.shape, tk = shp[shp.length - 1], tq = shp[shp.length - 2], heads = [];
    for (var hh = 0; hh * tq * tk < n; hh++) {
      var rows = [];
      for (var r = 0; r < tq; r++) rows.push(flat.subarray((hh * tq + r) * tk, (hh * tq + r + 1) * tk));
      heads.push(rows);
    }
    return heads;
  }
  DATA.attention.forEach(function (l) { l.w = fromF16(l.w); l.g = fromF16(l.g); });

  if (DATA.warning) { $("#tga-warning").textContent = "⚠ " + DATA.warning; $("#tga-warning").classList.add("on"); }

  // -- the graphs: node and edge elements by the ids the Python side gave them ------------
  // (a packed page's full pictures behind an overview come in `lazy`: parsed when first shown)
  var graphs = {};
  function wire(box) {
    var g = { box: box, svg: $("svg", box), nodes: {}, edges: {} }, name = box.id.replace("tga-", "");
    $$("g.node", box).forEach(function (n) { g.nodes[$("title", n).textContent.trim()] = n; });
    $$("g.edge", box).forEach(function (e) {
      var t = $("title", e).textContent.trim().replace("\u2192", "->");
      (g.edges[t] = g.edges[t] || []).push(e);
    });
    graphs[name] = g;
    if (g.svg) panZoom(g);
    foldable(g);
    clickable(g, name);
  }
  $$(".tga-graph").forEach(function (box) { if (!lazy[box.id]) wire(box); });
  function unpack(name) {
    var box = document.getElementById("tga-" + name);
    if (!lazy[box.id]) return;
    box.innerHTML = lazy[box.id];
    delete lazy[box.id];
    wire(box);
  }

  // -- pan and zoom: drag moves the viewBox, the wheel scales it around the pointer -------
  function panZoom(g) {
    var svg = g.svg;
    var vb = svg.viewBox.baseVal;
    if (!vb || !vb.width) return;
    svg.removeAttribute("width");
    svg.removeAttribute("height");
    svg.setAttribute("preserveAspectRatio", "xMidYMin meet");
    var drag = null;
    g.moved = false;
    svg.addEventListener("wheel", function (ev) {
      ev.preventDefault();
      var r = svg.getBoundingClientRect();
      var k = ev.deltaY < 0 ? 0.85 : 1 / 0.85;
      var px = vb.x + (ev.clientX - r.left) / r.width * vb.width;
      var py = vb.y + (ev.clientY - r.top) / r.height * vb.height;
      vb.x = px - (px - vb.x) * k; vb.y = py - (py - vb.y) * k;
      vb.width *= k; vb.height *= k;
    }, { passive: false });
    svg.addEventListener("mousedown", function (ev) {
      drag = { x: ev.clientX, y: ev.clientY, vx: vb.x, vy: vb.y }; g.moved = false;
    });
    window.addEventListener("mousemove", function (ev) {
      if (!drag) return;
      var r = svg.getBoundingClientRect();
      var dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) g.moved = true;
      vb.x = drag.vx - dx / r.width * vb.width;
      vb.y = drag.vy - dy / r.height * vb.height;
    });
    window.addEventListener("mouseup", function () { drag = null; });
    var home = [vb.x, vb.y, vb.width, vb.height];
    svg.addEventListener("dblclick", function () { vb.x = home[0]; vb.y = home[1]; vb.width = home[2]; vb.height = home[3]; });
  }

  // -- a large graph opens as its overview (modules collapsed); a click on a module expands it:
  // the whole picture, framed on that module's nodes --------------------------------------
  var overview = DATA.overview || {};
  function setOverview(name, on) {
    var o = document.getElementById("tga-" + name + "-overview"), f = document.getElementById("tga-" + name);
    if (!o || !f) return;
    o.classList.toggle("tga-shelved", !on);
    f.classList.toggle("tga-shelved", on);
    if (!on) unpack(name);
    $("#tga-overview").classList.toggle("on", Object.keys(overview).some(function (n) {
      return !document.getElementById("tga-" + n).classList.contains("tga-shelved");
    }));
  }
  function units(g) { // screen pixels per unit of the viewBox, and where the picture starts
    var sr = g.svg.getBoundingClientRect(), vb = g.svg.viewBox.baseVal;
    var k = Math.min(sr.width / vb.width, sr.height / vb.height);
    return { k: k, left: sr.left + (sr.width - vb.width * k) / 2, top: sr.top };
  }
  function frame(g, ids) { // the viewBox around the nodes `ids` (a margin around them)
    var vb = g.svg.viewBox.baseVal, u = units(g), x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    ids.forEach(function (id) {
      var n = g.nodes[id];
      if (!n) return;
      var r = n.getBoundingClientRect();
      x0 = Math.min(x0, r.left); y0 = Math.min(y0, r.top); x1 = Math.max(x1, r.right); y1 = Math.max(y1, r.bottom);
    });
    if (x0 === Infinity) return;
    var ux = vb.x + (x0 - u.left) / u.k, uy = vb.y + (y0 - u.top) / u.k, uw = (x1 - x0) / u.k, uh = (y1 - y0) / u.k;
    var m = 0.08 * Math.max(uw, uh) + 20, sr = g.svg.getBoundingClientRect();
    // the whole of them, between 0.8 and 1.5 screen pixels a unit: where that is too small to
    // read, the top of them at 0.8 (the rest a pan or a step away)
    var k = Math.max(0.8, Math.min(1.5, sr.width / (uw + 2 * m), sr.height / (uh + 2 * m)));
    var w = sr.width / k, h = sr.height / k;
    vb.x = ux + uw / 2 - w / 2; vb.y = uh + 2 * m > h ? uy - m : uy + uh / 2 - h / 2; vb.width = w; vb.height = h;
  }
  function expand(name, mid) {
    setOverview(name, false);
    frame(graphs[name], overview[name][mid] || []);
  }
  Object.keys(overview).forEach(function (n) { setOverview(n, true); });
  $("#tga-overview").addEventListener("click", function () { Object.keys(overview).forEach(function (n) { setOverview(n, true); }); });

  // -- tabs -----------------------------------------------------------------------------
  var view = "forward";
  function show(v) {
    view = v;
    $$("#tga-tabs button").forEach(function (b) { b.classList.toggle("on", b.dataset.view === v); });
    document.body.dataset.view = v;
    if (v === "attention") drawAttention();
  }
  $$("#tga-tabs button").forEach(function (b) { b.addEventListener("click", function () { show(b.dataset.view); }); });
  show("forward");

  // -- folding a module's cluster: its nodes and inner edges hide, its box stays ----------
  function inside(a, b) {
    return a.x >= b.x - 0.5 && a.y >= b.y - 0.5 && a.x + a.width <= b.x + b.width + 0.5 && a.y + a.height <= b.y + b.height + 0.5;
  }
  function foldable(g) {
    $$("g.cluster", g.box).forEach(function (c) {
      c.addEventListener("click", function (ev) {
        if (g.moved) return;
        ev.stopPropagation();
        var box = c.getBBox();
        var folded = !c.classList.contains("tga-folded");
        c.classList.toggle("tga-folded", folded);
        var hidden = {};
        Object.keys(g.nodes).forEach(function (id) {
          var n = g.nodes[id];
          if (n.classList.contains("tga-in-fold") && !folded && !inside(n.getBBox(), box)) return;
          if (folded ? inside(n.getBBox(), box) : n.dataset.fold === c.id) {
            n.classList.toggle("tga-in-fold", folded);
            if (folded) n.dataset.fold = n.dataset.fold || c.id; else delete n.dataset.fold;
          }
          if (n.classList.contains("tga-in-fold")) hidden[id] = true;
        });
        $$("g.cluster", g.box).forEach(function (o) {
          if (o !== c && inside(o.getBBox(), box)) o.classList.toggle("tga-in-fold", folded);
        });
        // an edge inside a fold goes; one that crosses its border stays, and ends at the border:
        // the folded box is drawn over the edges (moved last in the picture), opaque
        Object.keys(g.edges).forEach(function (t) {
          var ends = t.split("->"), a = g.nodes[ends[0]], b = g.nodes[ends[1]];
          var gone = !!(hidden[ends[0]] && hidden[ends[1]]) && a.dataset.fold === b.dataset.fold;
          g.edges[t].forEach(function (e) { e.classList.toggle("tga-in-fold", gone); });
        });
        if (folded) { c.tgaPlace = c.nextSibling; c.parentNode.appendChild(c); }
        else if (c.tgaPlace !== undefined) { c.parentNode.insertBefore(c, c.tgaPlace); delete c.tgaPlace; }
        $$("text.tga-fold-note", c).forEach(function (t) { t.remove(); });
        if (folded) {
          [["folded: " + Object.keys(hidden).filter(function (id) { return g.nodes[id].dataset.fold === c.id; }).length + " nodes", -7],
            ["click to unfold", 7]].forEach(function (line) {
            var t = svgEl("text", { "class": "tga-fold-note", x: box.x + box.width / 2, y: box.y + box.height / 2 + line[1], "text-anchor": "middle", "dominant-baseline": "central" });
            t.textContent = line[0];
            c.appendChild(t);
          });
        }
      });
    });
  }

  // -- search by name -------------------------------------------------------------------
  var search = $("#tga-search");
  search.addEventListener("input", function () {
    var q = search.value.trim().toLowerCase();
    var count = 0;
    Object.keys(graphs).forEach(function (name) {
      var g = graphs[name];
      Object.keys(g.nodes).forEach(function (id) {
        var n = g.nodes[id];
        var rec = DATA.tensors[DATA.nodes[id]];
        var hay = (n.textContent + " " + (rec ? rec.title + " " + rec.module : "")).toLowerCase();
        var hit = q && hay.indexOf(q) >= 0;
        n.classList.toggle("tga-match", !!hit);
        n.classList.toggle("tga-dim", !!q && !hit);
        if (hit && g.box.offsetParent) count++;
      });
    });
    $("#tga-found").textContent = q ? count + " found" : "";
  });

  // -- heat maps ------------------------------------------------------------------------
  function cells(h) {
    var bin = atob(h.f32 || h.u8), n = bin.length, out;
    if (h.f32) {
      var bytes = new Uint8Array(n);
      for (var i = 0; i < n; i++) bytes[i] = bin.charCodeAt(i);
      return new Float32Array(bytes.buffer);
    }
    out = new Float64Array(n);
    var span = h.max > h.min ? h.max - h.min : 1;
    for (var j = 0; j < n; j++) out[j] = h.min + bin.charCodeAt(j) / 255 * span;
    return out;
  }
  function colour(v, lo, hi) {
    if (lo < 0 && hi > 0) { // diverging around 0: blue, white, red
      var m = Math.max(-lo, hi), t = Math.max(-1, Math.min(1, v / m));
      var a = Math.round(255 * (1 - Math.abs(t)));
      return t >= 0 ? "rgb(255," + a + "," + a + ")" : "rgb(" + a + "," + a + ",255)";
    }
    var s = hi > lo ? (v - lo) / (hi - lo) : 0.5; // one sign: light to dark
    var r = Math.round(250 - 200 * s), g = Math.round(250 - 150 * s), b = Math.round(255 - 90 * s);
    return "rgb(" + r + "," + g + "," + b + ")";
  }
  // a colour scale: the colours a map uses, from its low end to its high end, with their numbers
  function scaleBar(lo, hi) {
    var c = el("canvas", { width: 160, height: 10 }), ctx = c.getContext("2d");
    for (var x = 0; x < 160; x++) { ctx.fillStyle = colour(lo + (hi - lo) * x / 159, lo, hi); ctx.fillRect(x, 0, 1, 10); }
    var kids = [el("span", { "class": "tga-scale-lo", text: fmt(lo) }), c, el("span", { "class": "tga-scale-hi", text: fmt(hi) })];
    return el("div", { "class": "tga-scale" }, kids);
  }
  function heatMap(h, label) {
    var wrap = el("div", { "class": "tga-heat" }, [el("h3", { text: label })]);
    if (!h) { wrap.appendChild(el("p", { "class": "tga-note", text: "none" })); return wrap; }
    var data = cells(h), idx = h.lead.map(function () { return 0; });
    var px = Math.max(4, Math.min(18, Math.floor(240 / Math.max(h.cols, h.rows))));
    var canvas = el("canvas", { width: h.cols * px, height: h.rows * px });
    var info = el("div", { "class": "tga-heat-info" });
    function draw() {
      var off = 0;
      for (var i = 0; i < idx.length; i++) off = off * h.lead[i] + idx[i];
      off *= h.rows * h.cols;
      var ctx = canvas.getContext("2d");
      for (var r = 0; r < h.rows; r++) for (var c = 0; c < h.cols; c++) {
        ctx.fillStyle = colour(data[off + r * h.cols + c], h.min, h.max);
        ctx.fillRect(c * px, r * px, px, px);
      }
      var sl = idx.length ? "[" + idx.join(", ") + ", :, :] " : "";
      var full = h.shape.slice(-2).join(" x ");
      info.textContent = sl + "min " + fmt(h.min) + " · max " + fmt(h.max) +
        (h.rows + " x " + h.cols !== full && h.shape.length ? " · shown " + h.rows + " x " + h.cols + " of " + full : "");
    }
    h.lead.forEach(function (n, i) {
      if (n < 2) return;
      var s = el("input", { type: "range", min: 0, max: n - 1, value: 0, "class": "tga-slider", "aria-label": "axis " + i });
      s.addEventListener("input", function () { idx[i] = +s.value; draw(); });
      wrap.appendChild(el("label", { text: "axis " + i + " " }, [s]));
    });
    canvas.addEventListener("mousemove", function (ev) {
      var r = Math.floor(ev.offsetY / px), c = Math.floor(ev.offsetX / px);
      var off = 0;
      for (var i = 0; i < idx.length; i++) off = off * h.lead[i] + idx[i];
      canvas.title = "[" + r + ", " + c + "] " + fmt(data[off * h.rows * h.cols + r * h.cols + c]);
    });
    wrap.appendChild(canvas);
    wrap.appendChild(scaleBar(h.min, h.max));
    wrap.appendChild(info);
    draw();
    return wrap;
  }

  // -- the node panel -------------------------------------------------------------------
  var panel = $("#tga-panel");
  function showNode(id, graphName) {
    var rec = DATA.tensors[DATA.nodes[id]];
    Object.keys(graphs).forEach(function (n) {
      Object.keys(graphs[n].nodes).forEach(function (k) { graphs[n].nodes[k].classList.toggle("tga-selected", k === id); });
    });
    panel.innerHTML = "";
    if (!rec) { panel.appendChild(el("p", { "class": "tga-note", text: id + ": nothing to show here (the legend, or a folded module)" })); return; }
    panel.appendChild(el("h2", { text: rec.title }));
    var facts = [["op", rec.op, "tga-op"], ["module", rec.module || "(top level)", "tga-module"], ["shape", rec.shape, "tga-shape"],
      ["dtype", rec.dtype, "tga-dtype"], ["device", rec.device, "tga-device"], ["values", rec.values.join("; "), "tga-values"]];
    if (rec.grad_values.length) facts.push(["gradient", rec.grad_values.join("; "), "tga-grad-values"]);
    panel.appendChild(el("table", { "class": "tga-facts" }, facts.map(function (f) {
      return el("tr", {}, [el("th", { text: f[0] }), el("td", { "class": f[2], text: f[1] })]);
    })));
    var lines = graphName === "backward" && id.indexOf("bw") === 0 ? rec.step_lines : rec.line;
    if (lines !== undefined) {
      panel.appendChild(el("h3", { text: graphName === "backward" && id.indexOf("bw") === 0 ? "program: its backward step" : "program: the line that computes it" }));
      panel.appendChild(el("pre", { "class": "tga-line", text: lines && lines.length ? lines.join("\n") : "(no line of its own: folded by the program's optimizer, or a leaf)" }));
      markProgram(lines || []);
    }
    panel.appendChild(heatMap(rec.value, "value"));
    panel.appendChild(heatMap(rec.grad, rec.grad_negligible ? "gradient of the loss: ~0 next to the values (rounding noise)" : "gradient of the loss"));
    if (rec.grad_negligible) $(".tga-heat:last-child", panel).classList.add("tga-negligible");
  }
  function clickable(g, name) {
    Object.keys(g.nodes).forEach(function (id) {
      g.nodes[id].addEventListener("click", function (ev) {
        if (g.moved) return;
        ev.stopPropagation();
        var base = name.replace("-overview", "");
        if (base !== name && overview[base] && overview[base][id]) { expand(base, id); return; }
        showNode(id, base);
      });
    });
  }

  // -- the program ----------------------------------------------------------------------
  var progBox = $("#tga-program");
  var progLines = [];
  if (DATA.program) {
    DATA.program.split("\n").forEach(function (line) {
      var s = el("span", { text: line + "\n" });
      progLines.push([line.trim(), s]);
      progBox.appendChild(s);
    });
  } else {
    progBox.textContent = "No program: explore a function (tga.viz.explore(loss_fn, x)) to see its traced program here.";
  }
  // a click on a line of the program opens the node whose value (or backward step) it computes
  var lineNode = {};
  Object.keys(DATA.nodes).forEach(function (id) {
    var rec = DATA.tensors[DATA.nodes[id]];
    if (!rec) return;
    if (id.indexOf("op") === 0) (rec.line || []).forEach(function (l) { lineNode[l] = lineNode[l] || [id, "forward"]; });
    if (id.indexOf("bw") === 0) (rec.step_lines || []).forEach(function (l) { lineNode[l] = lineNode[l] || [id, "backward"]; });
  });
  progLines.forEach(function (p) {
    var hit = lineNode[p[0]];
    if (!hit) return;
    p[1].classList.add("tga-linked");
    p[1].addEventListener("click", function () { showNode(hit[0], hit[1]); });
  });
  function markProgram(lines) {
    progLines.forEach(function (p) { p[1].classList.toggle("tga-hit", lines.indexOf(p[0]) >= 0); });
  }

  // -- stepping through the backward pass, in the engine's order -------------------------
  var steps = DATA.steps, at = -1, timer = null;
  var status = $("#tga-step-status"), stepLine = $("#tga-step-line");
  var accFill = {};
  function setFill(g, id, frac, text) {
    var n = g.nodes[id];
    if (!n) return;
    var shape = $("ellipse, polygon, path", n);
    if (shape && accFill[id] === undefined) accFill[id] = shape.getAttribute("fill");
    if (shape) shape.setAttribute("fill", frac === null ? accFill[id] : "rgba(142,68,173," + (0.15 + 0.75 * frac).toFixed(2) + ")");
    var t = $("text.tga-shares", n);
    if (text === null) { if (t) t.remove(); return; }
    if (!t) {
      var b = n.getBBox();
      t = svgEl("text", { "class": "tga-shares", x: b.x + b.width / 2, y: b.y + b.height + 11, "text-anchor": "middle" });
      n.appendChild(t);
    }
    t.textContent = text;
  }
  function applySteps() {
    if (at >= 0) setOverview("backward", false);
    if (at >= 0 && view === "both") setOverview("forward", false);
    var bw = graphs.backward, fw = graphs.forward;
    [bw, fw].forEach(function (g) {
      if (!g) return;
      $$(".tga-current, .tga-ran, .tga-sent", g.box).forEach(function (e) { e.classList.remove("tga-current", "tga-ran", "tga-sent"); });
    });
    Object.keys(accFill).forEach(function (id) { setFill(bw, id, null, null); });
    var got = {};
    for (var i = 0; i <= at; i++) {
      var s = steps[i], n = bw.nodes[s.node];
      if (n) n.classList.add(i === at ? "tga-current" : "tga-ran");
      var f = fw && fw.nodes["op" + s.node.slice(2)];
      if (f) f.classList.add(i === at ? "tga-current" : "tga-ran");
      s.sends.forEach(function (d) {
        if (i === at) (bw.edges[d.edge] || []).forEach(function (e) { e.classList.add("tga-sent"); });
        if (d.shares) got[d.to] = [d.share, d.shares];
      });
    }
    Object.keys(got).forEach(function (id) {
      setFill(bw, id, got[id][0] / got[id][1], got[id][0] + " of " + got[id][1] + " shares");
    });
    if (at < 0) { status.textContent = "backward pass: " + steps.length + " steps, not started"; stepLine.textContent = ""; return; }
    var s = steps[at];
    var to = s.sends.map(function (d) {
      return "‖g‖ " + (d.norm === null ? "nan" : fmt(d.norm)) + " to " + label(bw, d.to, d.tensor) +
        (d.shares ? " (share " + d.share + " of " + d.shares + ")" : "");
    });
    status.textContent = "step " + (at + 1) + " of " + steps.length + ": " + label(bw, s.node, s.tensor) + " sends " + (to.join(", ") || "nothing");
    stepLine.textContent = s.lines.join("\n");
    markProgram(s.lines);
    if (view === "forward") show("backward");
    showNode(s.node, "backward");
    follow(bw, s.node);
    if (view === "both") follow(fw, "op" + s.node.slice(2));
  }
  // what a node is called on screen: its first line of text (the tensor's title without a picture)
  function label(g, id, tensor) {
    var n = g && g.nodes[id], t = n && $("text", n);
    if (t && t.textContent.trim()) return t.textContent.trim();
    var rec = DATA.tensors[tensor];
    return rec ? rec.title : id;
  }
  // the camera follows the step: a node outside the visible part of its graph is brought to its centre
  function follow(g, id) {
    var n = g && g.nodes[id], vb = g && g.svg && g.svg.viewBox.baseVal;
    if (!n || !vb || !vb.width || !g.box.offsetParent) return;
    var box = g.box.getBoundingClientRect(), r = n.getBoundingClientRect(), sr = g.svg.getBoundingClientRect();
    if (!r.width && !r.height) return; // (hidden in a folded module)
    var m = 12;
    if (r.left >= box.left + m && r.right <= box.right - m && r.top >= box.top + m && r.bottom <= box.bottom - m) return;
    var k = Math.min(sr.width / vb.width, sr.height / vb.height); // screen pixels per unit (preserveAspectRatio: meet)
    var cx = vb.x + ((r.left + r.right) / 2 - sr.left - (sr.width - vb.width * k) / 2) / k;
    var cy = vb.y + ((r.top + r.bottom) / 2 - sr.top) / k;
    var z = k < 0.6 ? 1 / k : 1; // too small to read (a large graph at fit): zoom to one pixel a unit
    vb.width /= z; vb.height /= z;
    k *= z; // then the node's centre to the centre of the visible box
    vb.x = cx - ((box.left + box.right) / 2 - sr.left - (sr.width - vb.width * k) / 2) / k;
    vb.y = cy - ((box.top + box.bottom) / 2 - sr.top) / k;
  }
  function go(k) { at = Math.max(-1, Math.min(steps.length - 1, k)); applySteps(); }
  $("#tga-next").addEventListener("click", function () { go(at + 1); });
  $("#tga-prev").addEventListener("click", function () { go(at - 1); });
  $("#tga-reset").addEventListener("click", function () { go(-1); });
  $("#tga-play").addEventListener("click", function () {
    if (timer) { clearInterval(timer); timer = null; return; }
    timer = setInterval(function () { if (at >= steps.length - 1) { clearInterval(timer); timer = null; } else go(at + 1); }, 700);
  });
  document.addEventListener("keydown", function (ev) { // arrow keys step, outside the search box
    if (ev.target === search || !steps.length) return;
    if (ev.key === "ArrowRight") go(at + 1);
    else if (ev.key === "ArrowLeft") go(at - 1);
  });
  if (!steps.length) { $("#tga-stepbar").classList.add("tga-off"); status.textContent = "no backward pass to step through"; }
  else applySteps();

  // -- attention: head view and model view ----------------------------------------------
  var HEAD_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"];
  var attBox = $("#tga-attention"), attState = { layer: 0, heads: null, grad: false };
  function lines(group, layer, h, x0, x1, y0, dy, colourOf, token) {
    var w = layer.w[h], g = layer.g ? layer.g[h] : null, gmax = 0;
    if (attState.grad && g) g.forEach(function (row) { row.forEach(function (v) { gmax = Math.max(gmax, Math.abs(v)); }); });
    for (var i = 0; i < w.length; i++) {
      if (token !== null && token !== i) continue;
      for (var j = 0; j < w[i].length; j++) {
        var a = w[i][j], stroke = colourOf;
        if (attState.grad && g) { a = gmax ? Math.abs(g[i][j]) / gmax : 0; stroke = g[i][j] >= 0 ? "#c0392b" : "#2c5aa0"; }
        if (a < 0.01) continue;
        group.appendChild(svgEl("line", { x1: x0, y1: y0 + i * dy, x2: x1, y2: y0 + j * dy, stroke: stroke, "stroke-width": 1 + 3 * a, "stroke-opacity": Math.min(1, 0.15 + 0.85 * a), "data-q": i }));
      }
    }
  }
  function maxAbs(rows) {
    var m = 0;
    rows.forEach(function (row) { row.forEach(function (v) { m = Math.max(m, Math.abs(v)); }); });
    return m;
  }
  // a matrix of weights (or, with g, of their gradient) as an SVG: the cells an image, the
  // query tokens along its rows and the key tokens along its columns (every one that has room)
  function matrix(w, g, q, k, px, cls) {
    var tq = w.length, tk = w[0].length, m = g ? maxAbs(g) || 1 : 1;
    var c = el("canvas", { width: tk, height: tq }), ctx = c.getContext("2d");
    for (var i = 0; i < tq; i++) for (var j = 0; j < tk; j++) {
      ctx.fillStyle = g ? colour(g[i][j], -m, m) : colour(w[i][j], 0, 1);
      ctx.fillRect(j, i, 1, 1);
    }
    var font = Math.min(11, Math.max(7, px)), every = Math.max(1, Math.ceil(font / px));
    var longest = Math.max.apply(null, q.concat(k).map(function (t) { return String(t).length; }));
    var pad = Math.min(80, 6 + font * 0.6 * longest), W = pad + tk * px, H = pad + tq * px;
    var svg = svgEl("svg", { "class": cls, width: W, height: H, viewBox: "0 0 " + W + " " + H });
    svg.appendChild(svgEl("image", { x: pad, y: pad, width: tk * px, height: tq * px, href: c.toDataURL(), preserveAspectRatio: "none", "class": "tga-cells" }));
    for (var a = 0; a < tq; a += every) {
      var t = svgEl("text", { x: pad - 3, y: pad + (a + 0.5) * px, "text-anchor": "end", "dominant-baseline": "central", "font-size": font, "class": "tga-axis tga-axis-q" });
      t.textContent = q[a]; svg.appendChild(t);
    }
    for (var b = 0; b < tk; b += every) {
      var x = pad + (b + 0.5) * px, u = svgEl("text", { x: x, y: pad - 3, transform: "rotate(-90 " + x + " " + (pad - 3) + ")", "dominant-baseline": "central", "font-size": font, "class": "tga-axis tga-axis-k" });
      u.textContent = k[b]; svg.appendChild(u);
    }
    return svg;
  }
  // -- neuron view: for one query token and head, the query vector, each key vector, their
  // elementwise product, its sum (the score before scaling) and the weight that follows --------
  function fromI8(rec) {
    var bin = atob(rec.b64), n = bin.length, flat = new Float32Array(n), shp = rec.shape, d = shp[shp.length - 1], t = shp[shp.length - 2], out = [];
    for (var i = 0; i < n; i++) { var b = bin.charCodeAt(i); flat[i] = (b > 127 ? b - 256 : b) * rec.scale; }
    for (var h = 0; h * t * d < n; h++) {
      var rows = [];
      for (var r = 0; r < t; r++) rows.push(flat.subarray((h * t + r) * d, (h * t + r + 1) * d));
      out.push(rows);
    }
    return out;
  }
  function neuronView(layer) {
    if (!layer.qvals) { layer.qvals = fromI8(layer.qv); layer.kvals = fromI8(layer.kv); }
    var tq = layer.q.length, nh = Math.min(attState.nh || 0, layer.heads - 1);
    var nq = attState.nq === undefined || attState.nq >= tq ? tq - 1 : attState.nq;
    var q = layer.qvals[nh][nq], keys = layer.kvals[nh], d = q.length, w = layer.w[nh][nq];
    var wrap = el("div", { "class": "tga-neuron" });
    var hs = el("select", { id: "tga-neuron-head" }, layer.w.map(function (_, h) { return el("option", { value: h, text: "head " + h }); }));
    hs.value = nh;
    hs.addEventListener("change", function () { attState.nh = +hs.value; drawAttention(); });
    var qs = el("select", { id: "tga-neuron-query" }, layer.q.map(function (t, i) { return el("option", { value: i, text: i + ": " + t }); }));
    qs.value = nq;
    qs.addEventListener("change", function () { attState.nq = +qs.value; drawAttention(); });
    wrap.appendChild(el("h3", { text: "neuron view: query · key = the score behind each weight (click a query token above, or pick one)" }));
    wrap.appendChild(el("div", { "class": "tga-att-controls" }, [el("label", { text: "query " }, [qs]), el("label", { text: " " }, [hs])]));
    var c = Math.max(3, Math.min(10, Math.floor(260 / d))), lab = 70, gap = 14, x1 = lab, x2 = x1 + d * c + gap, x3 = x2 + d * c + gap;
    var mv = 0, mp = 0;
    for (var a = 0; a < d; a++) { mv = Math.max(mv, Math.abs(q[a])); }
    keys.forEach(function (k) { for (var b = 0; b < d; b++) { mv = Math.max(mv, Math.abs(k[b])); mp = Math.max(mp, Math.abs(q[b] * k[b])); } });
    mv = mv || 1; mp = mp || 1;
    var rowH = Math.max(c, 12), H = 34 + (keys.length + 1) * (rowH + 2), W = x3 + 170;
    var svg = svgEl("svg", { "class": "tga-neuron-view", width: W, height: H, viewBox: "0 0 " + W + " " + H, "data-head": nh, "data-query": nq });
    function text(x, y, str, cls, anchor) {
      var t = svgEl("text", { x: x, y: y, "class": cls, "text-anchor": anchor || "start", "dominant-baseline": "central" });
      t.textContent = str; svg.appendChild(t); return t;
    }
    function cells(x, y, v, m, cls) {
      for (var i = 0; i < v.length; i++) svg.appendChild(svgEl("rect", { x: x + i * c, y: y, width: c, height: rowH, fill: colour(v[i], -m, m), "class": cls }));
    }
    text(x1, 8, "q, k (d = " + d + ")", "tga-neuron-head"); text(x2, 8, "q × k", "tga-neuron-head");
    text(x3, 8, "q · k", "tga-neuron-head"); text(x3 + 60, 8, "weight", "tga-neuron-head");
    var y = 22;
    text(lab - 4, y + rowH / 2, layer.q[nq], "tga-neuron-q", "end");
    cells(x1, y, q, mv, "tga-q-cell");
    keys.forEach(function (k, j) {
      y += rowH + 2;
      text(lab - 4, y + rowH / 2, layer.k[j], "tga-neuron-k", "end");
      cells(x1, y, k, mv, "tga-k-cell");
      var prod = new Float32Array(d), dot = 0;
      for (var b = 0; b < d; b++) { prod[b] = q[b] * k[b]; dot += prod[b]; }
      cells(x2, y, prod, mp, "tga-p-cell");
      text(x3, y + rowH / 2, fmt(dot), "tga-neuron-dot").dataset.v = dot;
      svg.appendChild(svgEl("rect", { x: x3 + 60, y: y + 1, width: Math.max(0, 60 * w[j]), height: rowH - 2, fill: HEAD_COLOURS[nh % HEAD_COLOURS.length], "class": "tga-neuron-bar" }));
      text(x3 + 124, y + rowH / 2, fmt(w[j]), "tga-neuron-w").dataset.v = w[j];
    });
    wrap.appendChild(svg);
    if (layer.qk_scale !== undefined && layer.qk_scale !== null)
      wrap.appendChild(el("p", { "class": "tga-note", text: "weights = softmax(" + fmt(layer.qk_scale) + " × q · k, with the layer's mask) over the keys" }));
    wrap.appendChild(scaleBar(-mv, mv));
    return wrap;
  }
  function focusToken(svg, i) {
    $$("line", svg).forEach(function (l) { l.style.display = i === null || +l.dataset.q === i ? "" : "none"; });
    $$("text.tga-query", svg).forEach(function (t, k) { t.classList.toggle("tga-focus", k === i); });
  }
  function drawAttention() {
    attBox.innerHTML = "";
    var layers = DATA.attention;
    if (!layers.length) { attBox.appendChild(el("p", { "class": "tga-note", text: "No attention weights in this computation (no softmax inside an attention module or an attention scope)." })); return; }
    var layer = layers[attState.layer];
    // (past 16 tokens every head's lines at once are a smear: the view opens on head 0)
    if (!attState.heads || attState.heads.length !== layer.heads) attState.heads = layer.w.map(function (_, h) { return layer.q.length <= 16 || h === 0; });
    var sel = el("select", { id: "tga-layer" }, layers.map(function (l, i) { return el("option", { value: i, text: "layer " + i + ": " + l.name }); }));
    sel.value = attState.layer;
    sel.addEventListener("change", function () { attState.layer = +sel.value; attState.heads = null; drawAttention(); });
    var controls = el("div", { "class": "tga-att-controls" }, [el("label", { text: "layer " }, [sel])]);
    layer.w.forEach(function (_, h) {
      var cb = el("input", { type: "checkbox", "class": "tga-head-toggle", "data-head": h });
      cb.checked = attState.heads[h];
      cb.addEventListener("change", function () { attState.heads[h] = cb.checked; drawAttention(); });
      var lab = el("label", { "class": "tga-head-label", text: " head " + h }, []);
      lab.style.color = HEAD_COLOURS[h % HEAD_COLOURS.length];
      lab.insertBefore(cb, lab.firstChild);
      controls.appendChild(lab);
    });
    if (layer.g) {
      var gcb = el("input", { type: "checkbox", id: "tga-grad-overlay" });
      gcb.checked = attState.grad;
      gcb.addEventListener("change", function () { attState.grad = gcb.checked; drawAttention(); });
      controls.appendChild(el("label", { text: " ∂loss/∂weights (red +, blue −)" }, [gcb]));
    }
    attBox.appendChild(controls);
    // head view: queries on the left, keys on the right, one set of lines per head
    var n = Math.max(layer.q.length, layer.k.length), dy = 22, H = 30 + n * dy;
    var svg = svgEl("svg", { "class": "tga-headview", width: 420, height: H, viewBox: "0 0 420 " + H });
    var x0 = 130, x1 = 290;
    layer.w.forEach(function (_, h) {
      var g = svgEl("g", { "class": "tga-head", "data-head": h });
      if (!attState.heads[h]) g.style.display = "none";
      lines(g, layer, h, x0, x1, 24, dy, HEAD_COLOURS[h % HEAD_COLOURS.length], null);
      svg.appendChild(g);
    });
    layer.q.forEach(function (t, i) {
      var tx = svgEl("text", { x: x0 - 8, y: 28 + i * dy, "text-anchor": "end", "class": "tga-token tga-query" });
      tx.textContent = t;
      // hovering filters the lines in place: rebuilding the view here would drop the element the
      // pointer is on, and its mouseleave would never come
      tx.addEventListener("mouseenter", function () { focusToken(svg, i); });
      tx.addEventListener("mouseleave", function () { focusToken(svg, null); });
      tx.addEventListener("click", function () { attState.nq = i; drawAttention(); }); // (the neuron view's query)
      svg.appendChild(tx);
    });
    layer.k.forEach(function (t, j) {
      var tx = svgEl("text", { x: x1 + 8, y: 28 + j * dy, "class": "tga-token tga-key" });
      tx.textContent = t;
      svg.appendChild(tx);
    });
    attBox.appendChild(el("h3", { text: "head view: " + layer.name + " (hover a query token for its lines alone)" }));
    attBox.appendChild(svg);
    // the same weights as matrices, one per head shown: rows are queries, columns keys
    var mats = el("div", { "class": "tga-matrices" }), gm = 0;
    layer.w.forEach(function (w, h) {
      if (!attState.heads[h]) return;
      var g = attState.grad && layer.g ? layer.g[h] : null;
      if (g) gm = Math.max(gm, maxAbs(g));
      var px = Math.max(6, Math.min(24, Math.floor(200 / Math.max(w.length, w[0].length))));
      var m = matrix(w, g, layer.q, layer.k, px, "tga-matrix");
      m.dataset.head = h;
      mats.appendChild(el("figure", {}, [m, el("figcaption", { text: "head " + h + (g ? ": ∂loss/∂weights" : ": weights") + " (rows: queries, columns: keys)" })]));
    });
    attBox.appendChild(mats);
    attBox.appendChild(attState.grad && layer.g ? scaleBar(-gm || -1, gm || 1) : scaleBar(0, 1));
    if (layer.qv) attBox.appendChild(neuronView(layer));
    // model view: a grid of every head of every layer
    attBox.appendChild(el("h3", { text: "model view: layers (rows) by heads (columns); click one for its head view" }));
    var grid = el("div", { "class": "tga-modelview" });
    layers.forEach(function (l, li) {
      var row = el("div", { "class": "tga-model-row" }, [el("span", { "class": "tga-model-name", text: li + ": " + l.name })]);
      l.w.forEach(function (_, h) {
        var m = Math.max(l.q.length, l.k.length), ddy = 60 / Math.max(m, 1), th;
        if (m > 16) { // past 16 tokens, lines are a smear: each head is its matrix
          th = matrix(l.w[h], null, l.q, l.k, Math.max(1, Math.floor(96 / m)), "tga-thumb tga-thumb-matrix");
          th.dataset.layer = li; th.dataset.head = h;
        } else {
          th = svgEl("svg", { "class": "tga-thumb", width: 70, height: 70, viewBox: "0 0 70 70", "data-layer": li, "data-head": h });
          lines(th, l, h, 8, 62, 5, ddy, HEAD_COLOURS[h % HEAD_COLOURS.length], null);
        }
        th.addEventListener("click", function () {
          attState.layer = li; attState.heads = l.w.map(function (_, k) { return k === h; }); drawAttention();
        });
        row.appendChild(th);
      });
      grid.appendChild(row);
    });
    attBox.appendChild(grid);
  }
  if (DATA.attention.length) drawAttention();
  window.tgaExplorer = { data: DATA, graphs: graphs, step: go, show: show, showNode: showNode, readyAt: performance.now() };
}
})();
