"""`python -m taskmint.cli`."""

from taskmint.cli import main

raise SystemExit(main())
