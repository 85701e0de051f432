"""Device access on cgroup v2: a small eBPF filter attached to a job's cgroup.

cgroup v1 has a ``devices`` controller (``devices.deny``); cgroup v2 has none: the
kernel asks a program of type ``BPF_PROG_TYPE_CGROUP_DEVICE`` attached to the cgroup
(systemd and runc do the same). The program is a handful of instructions, assembled
here: for each (major, minor) of a character device the job must not open (the node's
GPUs it was not given, ``/dev/nvidiaN`` is ``195:N``), refuse; allow everything else.
It is loaded and attached with the ``bpf(2)`` system call through ``ctypes`` (the
standard library: the lean agent stays lean), with ``BPF_F_ALLOW_MULTI``, so a filter
of an enclosing cgroup (systemd's ``DevicePolicy=``) still applies too, and the job's
own child cgroups (its freezer, ``held``) inherit it. The attachment lives as long as
the cgroup; removing the cgroup frees it. Root (``CAP_SYS_ADMIN``) only.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct

#: ``__NR_bpf`` on the architectures Berth's nodes run.
SYSCALL_NUMBERS = {"x86_64": 321, "aarch64": 280, "arm64": 280, "ppc64le": 361,
                   "s390x": 351, "riscv64": 280}  # fmt: skip
BPF_PROG_LOAD, BPF_PROG_ATTACH = 5, 8
BPF_PROG_TYPE_CGROUP_DEVICE = 15
BPF_CGROUP_DEVICE = 6
BPF_F_ALLOW_MULTI = 2
#: ``bpf_cgroup_dev_ctx.access_type``'s low half: a character device.
DEVICE_CHAR = 2
#: Instruction codes: load a 32-bit word, 32-bit ``and``, jump if not equal, move a
#: 64-bit immediate, exit.
LDX_W, AND_K, JNE_K, MOV64_K, EXIT = 0x61, 0x54, 0x55, 0xB7, 0x95
ATTR_SIZE = 128  # what the kernel accepts of ``union bpf_attr`` (zeros beyond)


def _insn(code: int, dst: int = 0, src: int = 0, offset: int = 0, imm: int = 0) -> bytes:
    return struct.pack("<BBhi", code, (src << 4) | dst, offset, imm)


def program(denied: list[tuple[int, int]]) -> bytes:
    """The filter refusing each character device ``(major, minor)`` in ``denied``.

    ``r1`` points at ``{u32 access_type; u32 major; u32 minor}``; the verdict is ``r0``
    (1 allow, 0 refuse)."""
    code = [
        _insn(LDX_W, 2, 1, 0),  # r2 = access_type
        _insn(AND_K, 2, imm=0xFFFF),  # r2 = the device's type
        _insn(LDX_W, 3, 1, 4),  # r3 = major
        _insn(LDX_W, 4, 1, 8),  # r4 = minor
    ]
    for major, minor in denied:  # each rule: five instructions, skipped on a mismatch
        code += [
            _insn(JNE_K, 2, offset=4, imm=DEVICE_CHAR),
            _insn(JNE_K, 3, offset=3, imm=major),
            _insn(JNE_K, 4, offset=2, imm=minor),
            _insn(MOV64_K, 0, imm=0),
            _insn(EXIT),
        ]
    code += [_insn(MOV64_K, 0, imm=1), _insn(EXIT)]
    return b"".join(code)


def _bpf(command: int, attr: bytes) -> int:
    number = SYSCALL_NUMBERS.get(platform.machine())
    if number is None:
        raise OSError(errno.ENOSYS, f"bpf(2) is not known on {platform.machine()}")
    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(attr.ljust(ATTR_SIZE, b"\0"), ATTR_SIZE)
    result = int(libc.syscall(number, command, buffer, ATTR_SIZE))
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"bpf(2): {os.strerror(code)}")
    return result


def load(denied: list[tuple[int, int]]) -> int:
    """Load the filter for ``denied``; its file descriptor (``OSError`` if refused)."""
    code = ctypes.create_string_buffer(program(denied))
    license_ = ctypes.create_string_buffer(b"GPL")
    count = (len(code) - 1) // 8  # the buffer ends with a NUL
    attr = struct.pack("<IIQQ", BPF_PROG_TYPE_CGROUP_DEVICE, count,
                       ctypes.addressof(code), ctypes.addressof(license_))  # fmt: skip
    return _bpf(BPF_PROG_LOAD, attr)


def deny(cgroup: str, denied: list[tuple[int, int]]) -> None:
    """Attach a filter refusing ``denied`` to the v2 cgroup ``cgroup`` (``OSError`` if
    the kernel refuses: the job must not run with those devices open to it)."""
    program_fd = load(denied)
    try:
        cgroup_fd = os.open(cgroup, os.O_RDONLY | os.O_DIRECTORY)
        try:
            attr = struct.pack("<IIII", cgroup_fd, program_fd, BPF_CGROUP_DEVICE,
                               BPF_F_ALLOW_MULTI)  # fmt: skip
            _bpf(BPF_PROG_ATTACH, attr)
        finally:
            os.close(cgroup_fd)
    finally:
        os.close(program_fd)  # the cgroup holds the program now


def filters_work() -> bool:
    """Whether this kernel and process can load a device filter (checked once at the
    agent's start, so that jobs are not promised a protection it cannot give)."""
    try:
        os.close(load([]))
    except OSError:
        return False
    return True
