// Nothing to import: the symbol is what matters.
