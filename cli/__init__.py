"""stockade.cli: the typer application. Thin: it parses arguments and calls the packages."""


def run() -> None:
    """The `stockade` and `kubectl-stockade` executables: :func:`stockade.cli.main.main`, with the
    cyclic garbage collector paused while the command line's modules load (:mod:`.collector`) and
    no pydantic plugin loaded (:mod:`.plugins`)."""
    from stockade.cli.collector import pause_collector
    from stockade.cli.plugins import disable_pydantic_plugins

    pause_collector()
    disable_pydantic_plugins()
    from stockade.cli.main import main

    main()
