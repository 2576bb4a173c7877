"""Entry point of ``python -m fastsched`` (see :mod:`fastsched.cli`)."""

from fastsched.cli import main

raise SystemExit(main())
