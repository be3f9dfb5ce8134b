import sys

from stet_lsp.cli import main

sys.exit(main())
