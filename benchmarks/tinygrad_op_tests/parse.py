import collections
import xml.etree.ElementTree as ET

t = ET.parse("./r.xml")
rows = []
for tc in t.iter("testcase"):
    name = tc.get("classname").split(".")[-1] + "::" + tc.get("name")
    f = tc.find("failure") if tc.find("failure") is not None else tc.find("error")
    if f is None:
        st = "skip" if tc.find("skipped") is not None else "pass"
        msg = ""
    else:
        st = "fail"
        msg = (f.get("message") or "").replace("\n", " ")[:220]
    rows.append((name, st, msg))
open("./results.tsv", "w").write("\n".join("\t".join(r) for r in rows))
print(collections.Counter(r[1] for r in rows))
