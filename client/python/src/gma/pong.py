"""``python -m gma.pong``: the responder ``gma ping`` (and ``python -m gma.ping``) talks to. Every REQUEST
gets a REPLY with the same bytes, every DATA a DATA back to its sender; until Ctrl-C or --duration.

    python -m gma.pong --registry http://127.0.0.1:8080 --domain east --pc 127.0.0.1:8082
"""

import sys

import gma

from . import _cli


def start(registry, domain, label="pong", pc=None, security=None, **kw):
    """A Producer registered exactly as LABEL@DOMAIN that echoes what it gets, as Java's Pong."""
    holder = {}

    def on_message(m):
        if m.reply_expected:
            m.reply(m.data)
        elif m.command == gma.Command.DATA:
            holder["p"].send(m.sender, m.data)

    p = gma.Producer(registry=registry, domain=domain, label=label, exact=True, pc=pc, security=security,
                     on_message=on_message, **kw)
    holder["p"] = p
    return p


def main(argv=None):
    parser = _cli.endpoint_parser("python -m gma.pong", "The responder gma ping and the latency benchmarks"
                                  " talk to: every REQUEST gets a REPLY with the same bytes, every DATA a DATA"
                                  " back. Until Ctrl-C (or --duration).")
    parser.add_argument("--label", default="pong", help="registered exactly as LABEL@DOMAIN (default"
                        " %(default)s)")
    parser.add_argument("--duration", type=float, default=0, metavar="SECONDS",
                        help="stop after this many seconds; 0 runs until Ctrl-C")
    args = parser.parse_args(argv)
    try:
        pong = start(args.registry, args.domain, args.label, args.pc, _cli.security(args))
    except (gma.GmaError, ValueError, OSError) as e:
        return _cli.fail("pong", e)
    with pong:
        print("pong is " + pong.name, flush=True)
        _cli.until_stopped(args.duration)
    return 0


if __name__ == "__main__":
    sys.exit(main())
