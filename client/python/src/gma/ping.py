"""``python -m gma.ping NAME``: ping-pong with an endpoint (``gma pong`` or ``python -m gma.pong``), as
ping(8) does with a host, in the words and milliseconds of ``gma ping``. Exit status 0 when every reply came,
1 when any was lost, 2 for a usage error.

    python -m gma.ping pong@east --registry http://127.0.0.1:8080 --domain west --pc 127.0.0.1:8092 -c 5
"""

import math
import queue
import sys
import time

import gma

from . import _cli


class Ping:
    """A consumer that makes round trips: REQUEST and REPLY (blocking), or DATA and the pong's DATA back."""

    def __init__(self, registry, domain, pc=None, security=None, **kw):
        self._echoes = queue.Queue()
        self.consumer = gma.Consumer(registry=registry, domain=domain, label="ping", pc=pc, security=security,
                                     on_message=self._echoes.put, **kw)

    def once(self, target, size, blocking=True, timeout=5.0):
        """One round trip in seconds, or None when no answer came within ``timeout``. Raises GmaError for
        what failed other than the wait (NO_ROUTE, FORBIDDEN, QUEUE_FULL, ...)."""
        while not self._echoes.empty():  # the echoes of round trips given up on
            self._echoes.get_nowait()
        data = bytes(size)
        start = time.perf_counter()
        if blocking:
            try:
                self.consumer.request(target, data, timeout)
            except gma.GmaError as e:
                if e.code == gma.ErrorCode.TIMEOUT:
                    return None
                raise
        else:
            self.consumer.send(target, data)
            try:
                self._echoes.get(timeout=timeout)
            except queue.Empty:
                return None
        return time.perf_counter() - start

    def close(self):
        self.consumer.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _rank(sorted_times, p):
    return sorted_times[max(0, int(math.ceil(p * len(sorted_times))) - 1)]


def _loss(transmitted, received):
    if transmitted == 0:
        return "0"
    loss = 100.0 * (transmitted - received) / transmitted
    return str(int(loss)) if loss == int(loss) else "%.1f" % loss


def main(argv=None):
    parser = _cli.endpoint_parser("python -m gma.ping", "Ping-pong with an endpoint (gma pong answers), as"
                                  " ping(8) does with a host.")
    parser.add_argument("target", metavar="NAME", help="the endpoint's full name, such as pong@lan")
    parser.add_argument("-c", "--count", type=int, default=10, help="round trips (default %(default)s)")
    parser.add_argument("-s", "--size", type=int, default=64, help="bytes of data (default %(default)s)")
    parser.add_argument("-i", "--interval", type=float, default=1.0, metavar="SECONDS",
                        help="seconds between round trips (default %(default)s)")
    parser.add_argument("-W", "--timeout", type=float, default=5.0, metavar="SECONDS",
                        help="seconds to wait for each reply before it counts as lost (default %(default)s)")
    parser.add_argument("--nonblocking", action="store_true", help="DATA answered by DATA, rather than REQUEST"
                        " by REPLY")
    args = parser.parse_args(argv)
    if args.count < 1:
        parser.error("--count %d is under 1" % args.count)
    if not 0 <= args.size <= 16 << 20:
        parser.error("--size %d is outside 0..16777216" % args.size)
    at = args.target.find("@")
    if at <= 0 or at == len(args.target) - 1:
        parser.error('NAME "%s" is not a full name LABEL@DOMAIN' % args.target)
    try:
        ping = Ping(args.registry, args.domain, args.pc, _cli.security(args))
    except (gma.GmaError, ValueError, OSError) as e:
        return _cli.fail("ping", e)
    rtt, transmitted = [], 0
    start = time.perf_counter()
    with ping:
        print("PING %s: %d data bytes" % (args.target, args.size), flush=True)
        try:
            for seq in range(1, args.count + 1):
                transmitted += 1
                try:
                    took = ping.once(args.target, args.size, not args.nonblocking, args.timeout)
                except gma.GmaError as e:
                    print("from %s: seq=%d lost: %s %s" % (args.target, seq, e.code, e.sentence), flush=True)
                    took = -1
                if took is None:
                    print("from %s: seq=%d lost: no reply within %d ms" % (args.target, seq, args.timeout * 1000),
                          flush=True)
                elif took >= 0:
                    rtt.append(took)
                    print("%d bytes from %s: seq=%d time=%.3f ms" % (args.size, args.target, seq, took * 1e3),
                          flush=True)
                if args.interval > 0 and seq < args.count:
                    time.sleep(args.interval)
        except KeyboardInterrupt:
            pass
        elapsed = time.perf_counter() - start
        print("--- %s ping statistics ---" % args.target)
        print("%d transmitted, %d received, %s%% loss, time %d ms" % (transmitted, len(rtt),
                                                                     _loss(transmitted, len(rtt)), elapsed * 1000))
        if rtt:
            s = sorted(rtt)
            mean = sum(s) / len(s)
            mdev = math.sqrt(sum((t - mean) ** 2 for t in s) / len(s))
            print("rtt min/avg/max/mdev = %.3f/%.3f/%.3f/%.3f ms" % (s[0] * 1e3, mean * 1e3, s[-1] * 1e3,
                                                                    mdev * 1e3))
            print("rtt p50/p90/p99 = %.3f/%.3f/%.3f ms" % (_rank(s, .5) * 1e3, _rank(s, .9) * 1e3,
                                                          _rank(s, .99) * 1e3))
    return 0 if len(rtt) == transmitted else 1


if __name__ == "__main__":
    sys.exit(main())
