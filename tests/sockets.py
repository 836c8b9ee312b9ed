"""A process's TCP sockets, read from /proc (Linux): what the readers' tests check when they say
a reader follows its places over one connection, and which PostgreSQL sessions are a keeper's."""

from __future__ import annotations

import os


def socket_inodes(pid: int | str = "self") -> set[str]:
    """The inodes of a process's sockets (/proc/<pid>/fd)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    return inodes


def tcp_rows() -> list[list[str]]:
    """Every TCP socket of the machine, IPv4 and IPv6, as the fields of /proc/net/tcp(6)."""
    rows: list[list[str]] = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as lines:
            rows += [line.split() for line in list(lines)[1:]]
    return rows


def connections_to(port: int) -> int:
    """This process's established TCP connections to ``port`` on any address: its socket
    inodes found in /proc/net/tcp and tcp6."""
    inodes = socket_inodes()
    remote = f":{port:04X}"
    return sum(1 for fields in tcp_rows()
               if fields[2].endswith(remote) and fields[3] == "01" and fields[9] in inodes)


def local_ports_of(pid: int) -> set[int]:
    """The local ports of a process's TCP sockets."""
    inodes = socket_inodes(pid)
    return {int(fields[1].rsplit(":", 1)[1], 16) for fields in tcp_rows() if fields[9] in inodes}
