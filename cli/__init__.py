"""stockade.cli: the typer application. Thin: it parses arguments and calls the packages."""


def run() -> None:
    """The `stockade` and `kubectl-stockade` executables: :func:`stockade.cli.main.main`, with the
    cyclic garbage collector paused while the command line's modules load (:mod:`.collector`)."""
    from stockade.cli.collector import pause_collector

    pause_collector()
    from stockade.cli.main import main

    main()
