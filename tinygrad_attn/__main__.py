"""``python -m tinygrad_attn``: command-line tools (``graph``: draw a built-in block)."""

from .viz.cli import main

raise SystemExit(main())
