"""Installs the app as a lab would and runs what was installed, away from the source and build trees.

  check_install.py staged SOURCE_DIR BUILD_DIR
      `cmake --install BUILD_DIR --prefix /usr` into a staging root (DESTDIR), moves the root elsewhere, and runs
      the moved binary.
  check_install.py deb SOURCE_DIR BUILD_DIR
      makes the Debian package with CPack, checks its control fields, unpacks it with `dpkg-deb -x`, runs the
      unpacked binary, and lints the package with lintian (packaging/lintian-overrides lists what is on purpose).

Either way the installed program must list every built-in model, check every lesson, render a view, and hold no
path of the source tree; the desktop entry, the MIME types and the AppStream file must validate. Exits 1 on the first
problem, saying what it was.
"""
import gzip
import os
import shutil
import subprocess
import sys
import tempfile

EXPECTED_FILES = [
    "bin/transformer-atlas",
    "share/applications/transformer-atlas.desktop",
    "share/metainfo/transformer-atlas.metainfo.xml",
    "share/mime/packages/transformer-atlas.xml",
    "share/icons/hicolor/scalable/apps/transformer-atlas.svg",
    "share/icons/hicolor/48x48/apps/transformer-atlas.png",
    "share/icons/hicolor/256x256/apps/transformer-atlas.png",
    "share/man/man1/transformer-atlas.1.gz",
    "share/doc/transformer-atlas/copyright",
    "share/doc/transformer-atlas/changelog.Debian.gz",
    "share/doc/transformer-atlas/README.md",
    "share/transformer-atlas/lessons/course.md",
    "share/transformer-atlas/corpus/pride-and-prejudice.txt",
    "share/transformer-atlas/benchmarks/attention-sweep.json",
    "share/transformer-atlas/tokenizers/gpt2/tokenizer.json",
]


def fail(message):
    print("check_install: " + message, file=sys.stderr)
    sys.exit(1)


def run(args, env=None, cwd=None):
    result = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        fail("`%s` exited with %d:\n%s%s" % (" ".join(args), result.returncode, result.stdout, result.stderr))
    return result.stdout


def clean_environment(scratch):
    """No ATLAS_* override, a home of its own: the program finds its data as an installed one does."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATLAS_")}
    home = os.path.join(scratch, "home")
    os.makedirs(home, exist_ok=True)
    env.update(HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"),
               XDG_DATA_HOME=os.path.join(home, ".local/share"), QT_QPA_PLATFORM="offscreen",
               OPENBLAS_NUM_THREADS="1")
    return env


def source_models(source):
    folder = os.path.join(source, "resources/models")
    names = set()
    for entry in os.listdir(folder):
        if os.path.isfile(os.path.join(folder, entry, "config.json")):
            names.add(entry)
        elif entry.endswith(".gguf"):
            names.add(entry[:-len(".gguf")])
    return names


def check_tree(source, usr, scratch):
    for relative in EXPECTED_FILES:
        if not os.path.isfile(os.path.join(usr, relative)):
            fail("%s was not installed" % relative)
    binary = os.path.join(usr, "bin/transformer-atlas")
    with open(binary, "rb") as f:
        content = f.read()
    for folder in ("resources", "lessons"):
        path = os.path.join(source, folder).encode()
        if path in content:
            fail("the installed binary holds the source tree's path %s" % path.decode())

    env = clean_environment(scratch)
    cwd = os.path.join(scratch, "home")  # not the source tree
    listed = run([binary, "models"], env=env, cwd=cwd)
    expected = source_models(source)
    shown = {line.split()[0] for line in listed.splitlines() if line.strip() and not line.startswith(" ")}
    if not expected or not expected <= shown:
        fail("`models` lists %s, not every built-in model (%s missing)"
             % (sorted(shown), sorted(expected - shown)))

    lessons = sorted(f for f in os.listdir(os.path.join(source, "lessons"))
                     if f.endswith(".md") and f not in ("README.md", "course.md"))  # lessonFilesIn's rule
    checked = run([binary, "lesson", "check"], env=env, cwd=cwd)
    installed = os.path.join(usr, "share/transformer-atlas/lessons")
    if "the lessons in %s\n" % installed not in checked:
        fail("`lesson check` did not check the installed lessons (%s):\n%s" % (installed, checked))
    if sorted(os.listdir(installed)) != sorted(os.listdir(os.path.join(source, "lessons"))):
        fail("the installed lessons are not the source tree's")
    if "%d lesson" % len(lessons) not in checked:
        fail("`lesson check` did not check all %d lessons:\n%s" % (len(lessons), checked))

    spec = os.path.join(scratch, "attention.json")
    with open(spec, "w") as f:
        f.write('{"view": "attention", "model": "austen", "text": "It is a truth universally acknowledged", '
                '"layer": 1, "head": 0}\n')
    picture = os.path.join(scratch, "attention.png")
    run([binary, "render", "--spec", spec, "--out", picture, "--size", "640x400"], env=env, cwd=cwd)
    with open(picture, "rb") as f:
        if f.read(8) != b"\x89PNG\r\n\x1a\n":
            fail("`render` did not write a PNG")

    if shutil.which("desktop-file-validate"):
        run(["desktop-file-validate", os.path.join(usr, "share/applications/transformer-atlas.desktop")])
    if shutil.which("appstreamcli"):
        # Every error and warning fails, but one: the component id is the desktop file's name, not a reversed domain
        # (io.example.App), as the project owns no domain to name it by.
        report = subprocess.run(["appstreamcli", "validate", "--no-net", "--pedantic",
                                 os.path.join(usr, "share/metainfo/transformer-atlas.metainfo.xml")],
                                capture_output=True, text=True)
        problems = [line for line in report.stdout.splitlines()
                    if line.startswith(("E:", "W:")) and "cid-desktopapp-is-not-rdns" not in line]
        if problems:
            fail("appstreamcli validate:\n" + report.stdout + report.stderr)
    if shutil.which("update-mime-database"):
        mime = os.path.join(scratch, "mime")
        os.makedirs(os.path.join(mime, "packages"))
        shutil.copy(os.path.join(usr, "share/mime/packages/transformer-atlas.xml"), os.path.join(mime, "packages"))
        run(["update-mime-database", mime])
        globs = open(os.path.join(mime, "globs2")).read()
        if "application/x-gguf:*.gguf" not in globs:
            fail("the MIME database made from transformer-atlas.xml has no *.gguf glob")
    with gzip.open(os.path.join(usr, "share/man/man1/transformer-atlas.1.gz"), "rt") as f:
        if not f.read().startswith(".TH TRANSFORMER-ATLAS 1"):
            fail("the manual page is not transformer-atlas(1)")


def staged(source, build, scratch):
    stage = os.path.join(scratch, "stage")
    env = dict(os.environ, DESTDIR=stage)
    run(["cmake", "--install", build, "--prefix", "/usr"], env=env)
    moved = os.path.join(scratch, "moved")
    os.rename(stage, moved)  # nothing may depend on where it was installed
    check_tree(source, os.path.join(moved, "usr"), scratch)
    print("check_install: the staged install, moved, runs (models, lessons, a view)")


def field(deb, name):
    return run(["dpkg-deb", "--field", deb, name]).strip()


def deb(source, build, scratch):
    out = os.path.join(scratch, "package")
    run(["cpack", "--config", os.path.join(build, "CPackConfig.cmake"), "-B", out])
    debs = [f for f in os.listdir(out) if f.endswith(".deb")]
    if len(debs) != 1:
        fail("cpack made %s, not one .deb" % debs)
    package = os.path.join(out, debs[0])
    if field(package, "Package") != "transformer-atlas":
        fail("the package is not named transformer-atlas")
    depends = field(package, "Depends")
    for needed in ("libqt6widgets6", "libopenblas", "qt6-qpa-plugins", "libsentencepiece"):
        if needed not in depends:
            fail("Depends does not name %s: %s" % (needed, depends))
    root = os.path.join(scratch, "root")
    run(["dpkg-deb", "-x", package, root])
    check_tree(source, os.path.join(root, "usr"), scratch)
    if not shutil.which("lintian"):
        fail("lintian is not installed (`./atlas test` installs it)")
    report = subprocess.run(["lintian", "--fail-on", "error,warning", "--display-info", package],
                            capture_output=True, text=True)
    if report.returncode != 0:
        fail("lintian:\n" + report.stdout + report.stderr)
    print("check_install: %s unpacks, runs (models, lessons, a view) and lints clean" % debs[0])


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("staged", "deb"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    mode, source, build = sys.argv[1], os.path.realpath(sys.argv[2]), os.path.realpath(sys.argv[3])
    with tempfile.TemporaryDirectory(prefix="atlas-install-") as scratch:
        (staged if mode == "staged" else deb)(source, build, scratch)


if __name__ == "__main__":
    main()
