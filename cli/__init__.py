"""stockade.cli: the typer application. Thin: it parses arguments and calls the packages."""
