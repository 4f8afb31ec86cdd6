"""Run a command and record its own peak RSS: `python peak.py RSS_FILE COMMAND...`.

On Linux a child's `ru_maxrss` starts from the peak RSS of the process that spawned it (the
high-water mark survives fork and exec). Spawned from this small interpreter instead of a large
parent (a pytest session, a process that JIT-compiled with cppyy), the command's figure is its own.
Writes the command's peak RSS in KiB to RSS_FILE and exits with the command's status.
"""

import os
import sys


def main() -> int:
    rss_file, command = sys.argv[1], sys.argv[2:]
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            print(f"{command[0]}: {exc}", file=sys.stderr)
        os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    with open(rss_file, "w") as out:
        out.write(str(usage.ru_maxrss))
    return os.waitstatus_to_exitcode(status) % 256


if __name__ == "__main__":
    sys.exit(main())
