"""What the benchmarks read of a running server from /proc: its memory and its CPU time."""
import os


def status_mib(pid, field="VmRSS"):
    """A memory field of /proc/PID/status (VmRSS, VmHWM, ...) in MiB; NaN when it is absent."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            name, _, value = line.partition(":")
            if name == field:
                return int(value.split()[0]) / 1024
    return float("nan")


def cpu_seconds(pid):
    """(user + system CPU seconds of the process, of its reaped children)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks, (int(fields[13]) + int(fields[14])) / ticks
