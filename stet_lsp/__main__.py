from stet_lsp.cli import run

run()
