"""``python -m aurane.tools.fuzz``: a differential campaign over generated programs (the
runner and its options are ``aurane.tools.differential``'s)."""

from aurane.tools.differential import main

if __name__ == "__main__":
    raise SystemExit(main())
