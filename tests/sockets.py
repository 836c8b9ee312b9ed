"""This process's TCP connections, counted from /proc (Linux): what the readers' tests check
when they say a reader follows its places over one connection."""

from __future__ import annotations

import os


def connections_to(port: int) -> int:
    """This process's established TCP connections to ``port`` on any address: its socket
    inodes (/proc/self/fd) found in /proc/net/tcp and tcp6."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    remote = f":{port:04X}"
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as rows:
            for row in list(rows)[1:]:
                fields = row.split()
                count += fields[2].endswith(remote) and fields[3] == "01" and fields[9] in inodes
    return count
