"""The language server: a thin layer that translates between LSP and stet_lsp.core."""
