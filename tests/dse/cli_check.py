"""Helpers of the CLI checks (check_platform_cli.py, check_validate_cli.py): the dse executable
(the script's first argument), running it, and the keys a JSON object must hold."""
import subprocess
import sys

dse = sys.argv[1]


def run(*args):
    p = subprocess.run([dse, *args], capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        sys.exit(f"{' '.join(args)}: exit {p.returncode}\n{p.stderr}")
    return p.stdout


def need(obj, keys, where):
    for k in keys:
        if k not in obj:
            sys.exit(f"{where}: missing key {k!r} (has {sorted(obj)})")
