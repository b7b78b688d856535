"""ELF headers built byte by byte, so the binary kit's check is tested on exact inputs."""

from __future__ import annotations

import struct


def elf(program_types=(1,), machine=62, elf_class=2, data=1, e_type=2) -> bytes:
    header = bytearray(64)
    header[:4] = b"\x7fELF"
    header[4], header[5], header[6] = elf_class, data, 1
    struct.pack_into("<HHIQQQIHHHHHH", header, 16, e_type, machine, 1, 0x401000, 64, 0, 0, 64, 56,
                     len(program_types), 64, 0, 0)
    table = b"".join(struct.pack("<IIQQQQQQ", p_type, 5, 0, 0, 0, 0, 0, 0x1000) for p_type in program_types)
    return bytes(header) + table
