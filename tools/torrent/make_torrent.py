"""Makes a .torrent of one local file with libtorrent (Debian's python3-libtorrent).

usage: make_torrent.py <file> <v1|v2|hybrid> <out.torrent>
Prints the info hashes libtorrent computed: "<v1 or -> <v2 or ->". No tracker,
no web seed: the torrent names only its content, so nothing in it points off
this machine.
"""
import os
import sys

import libtorrent as lt

FLAGS = {"v1": lt.create_torrent.v1_only, "v2": lt.create_torrent.v2_only, "hybrid": 0}


def main() -> None:
    path, kind, out = sys.argv[1], sys.argv[2], sys.argv[3]
    if kind not in FLAGS:
        sys.exit(f"kind must be one of {', '.join(FLAGS)}, not {kind!r}")
    fs = lt.file_storage()
    lt.add_files(fs, path)
    if fs.num_files() != 1:
        sys.exit(f"{path}: one regular file, please")
    torrent = lt.create_torrent(fs, 0, FLAGS[kind])
    torrent.set_creator("torrent-scan-sync")
    lt.set_piece_hashes(torrent, os.path.dirname(os.path.abspath(path)))
    data = lt.bencode(torrent.generate())
    with open(out, "wb") as f:
        f.write(data)
    hashes = lt.torrent_info(data).info_hashes()
    print(str(hashes.v1) if hashes.has_v1() else "-", str(hashes.v2) if hashes.has_v2() else "-")


if __name__ == "__main__":
    main()
