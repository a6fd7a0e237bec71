"""``python -m tinygrad_attn``: command-line tools (``graph``: draw a built-in block; ``explore``: an interactive page about one)."""

from .viz.cli import main

raise SystemExit(main())
