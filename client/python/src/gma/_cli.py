"""What ``python -m gma.ping``, ``gma.pong`` and ``gma.agent`` share: the endpoint options of ``gma``'s
commands (--registry, --domain, --pc, --security, --identity) and running until Ctrl-C or --duration."""

import argparse
import os
import signal
import sys
import threading

from ._errors import GmaError


def endpoint_parser(prog, description):
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("--registry", default=os.environ.get("GMA_REGISTRY", "http://127.0.0.1:8080"),
                   metavar="URL[,URL...]", help="the registry's base URL (default %(default)s)")
    p.add_argument("--domain", default="lan", help="the endpoint's domain (default %(default)s)")
    p.add_argument("--pc", metavar="HOST:PORT", help="the uplink of the domain's PC servlet, to reach other"
                   " domains (default none: this domain only)")
    p.add_argument("--security", metavar="DIR", help="TLS and signed tokens with the files of gma keys")
    p.add_argument("--identity", metavar="NAME", help="with --security: who this side is (its NAME.key signs"
                   " its tokens)")
    return p


def security(args):
    if not args.security:
        return None
    from ._security import Security
    return Security.from_directory(args.security, identity=args.identity)


def until_stopped(seconds=0):
    """Waits for Ctrl-C, SIGTERM or ``seconds`` (0: no limit)."""
    stop = threading.Event()

    def handler(signum, frame):
        stop.set()

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)
    stop.wait(seconds if seconds > 0 else None)


def fail(prog, e):
    sentence = e.sentence if isinstance(e, GmaError) else str(e)
    code = (e.code + " ") if isinstance(e, GmaError) else ""
    print("%s: %s%s" % (prog, code, sentence), file=sys.stderr)
    return 1
