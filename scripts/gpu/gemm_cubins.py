#!/usr/bin/env python3
"""Registers and stack-frame bytes (a frame above 0: spills or a local array) of the GEMM kernels in a
kernel cache folder (the library's *.cubin files: a 32-byte header, then the ELF), read from each
kernel's .nv.info attributes (EIATTR_REGCOUNT 0x2f, EIATTR_FRAME_SIZE 0x11), no CUDA tools needed.

    gemm_cubins.py CACHE_DIR [--out FILE]     one line per kernel: registers, frame bytes, name
"""
import glob
import struct
import sys


def info(path):
    d = open(path, "rb").read(); d = d[d.index(b"\x7fELF"):]
    shoff, = struct.unpack_from("<Q", d, 0x28); shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3a)
    secs = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
    strtab = secs[shstrndx]
    name = lambda off: d[strtab[4] + off: d.index(b"\0", strtab[4] + off)].decode()
    symtab = [s for s in secs if s[1] == 2][0]; symstr = secs[symtab[6]]
    syms = []
    for i in range(symtab[5] // 24):
        st_name, st_info, st_other, st_shndx, st_value, st_size = struct.unpack_from("<IBBHQQ", d, symtab[4] + 24 * i)
        syms.append(d[symstr[4] + st_name: d.index(b"\0", symstr[4] + st_name)].decode())
    out = {}
    for s in secs:
        n = name(s[0])
        if n == ".nv.info" or n.startswith(".nv.info."):
            off, end = s[4], s[4] + s[5]
            while off < end:
                fmt, attr = d[off], d[off + 1]
                if fmt == 4:
                    size, = struct.unpack_from("<H", d, off + 2); body = d[off + 4: off + 4 + size]; off += 4 + size
                    if attr in (0x2f, 0x11, 0x12, 0x23) and size >= 8:
                        sym, val = struct.unpack_from("<II", body)
                        out.setdefault(syms[sym], {})[{0x2f: "reg", 0x11: "frame", 0x12: "minstack", 0x23: "maxstack"}[attr]] = val
                elif fmt == 3: off += 4
                elif fmt in (1, 2): off += 2 + (fmt == 2) * 0 + 2
                else: break
    return out


def main(argv):
    lines = []
    for p in sorted(glob.glob(argv[0] + "/*.cubin")):
        try:
            kernels = info(p)
        except (ValueError, IndexError, struct.error) as e:
            print(f"gemm_cubins: {p} skipped ({e})", file=sys.stderr)
            continue
        for k, v in kernels.items():
            if "gemm" in k:
                lines.append(f"{v.get('reg', '?'):>4} regs frame {v.get('frame', 0):>4}  {k}")
    lines.sort(key=lambda l: l.split()[-1])
    text = "\n".join(lines) + "\n"
    if len(argv) > 2 and argv[1] == "--out":
        open(argv[2], "w").write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
