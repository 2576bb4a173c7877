from fastsched.cli import main

raise SystemExit(main())
