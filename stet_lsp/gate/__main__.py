import sys

from stet_lsp.gate.cli import main

sys.exit(main())
