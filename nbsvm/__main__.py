"""``python -m nbsvm``: the ``nbsvm`` command (for environments whose scripts are not on
the PATH)."""

from nbsvm.cli import main

if __name__ == "__main__":
    main()
