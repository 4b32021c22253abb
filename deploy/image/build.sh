#!/usr/bin/env bash
# make image: build the Basalt OCI image with buildah, from scratch, then
# verify it (deploy/image/README.md).
#
#   deploy/image/build.sh [BUILD_DIR]      (default build-image; JOBS=N for make -j)
#
# 1. Builds the Release programs in BUILD_DIR (jemalloc linked, as always).
# 2. Assembles the image from `scratch`: the programs, exactly the shared
#    libraries ldd names for them and the dynamic loader, the CA bundle,
#    /etc/passwd, /etc/group (user basalt, 65532) and /etc/nsswitch.conf,
#    /tmp and /tmp/basalt (1777). No shell, no package manager. Commits it
#    without a name.
# 3. Verifies it without running a container (this sandbox refuses that):
#    mounts a working container of the new image and runs every program's
#    --version under chroot as uid 65532, after checking with the image's
#    own loader that every library resolves inside the image; then runs
#    deploy/image/smoke.yaml end to end (basalt-apisim and the four
#    services, from the image) the same way.
# 4. Only then names it localhost/basalt:VERSION and localhost/basalt:latest
#    (VERSION: project() in CMakeLists.txt) and writes
#    BUILD_DIR/basalt-image.oci.tar (buildah push oci-archive:).
#
# Needs root (buildah mount and chroot do). Idempotent: a re-run replaces the
# image and the archive, and removes working containers a failed run left.
# Uses only this machine's packages: nothing is pulled from a registry.
set -Eeuo pipefail
trap 'echo "image: error: \"$BASH_COMMAND\" failed (exit $?) at deploy/image/build.sh:$LINENO" >&2' ERR
cd "$(dirname "$0")/../.."

BUILD=${1:-build-image}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
# vfs works everywhere (no overlay mounts needed); BASALT_IMAGE_STORAGE_DRIVER
# chooses another, e.g. overlay, where the store already uses it.
DRIVER=${BASALT_IMAGE_STORAGE_DRIVER:-vfs}
REPO=localhost/basalt
BUILD_CTR=basalt-image-build   # the working container the image is assembled in
VERIFY_CTR=basalt-image-verify # the working container the image is checked in
USER_ID=65532
# The programs, as paths in the build tree; the image keeps this layout under
# /opt/basalt so that basalt-scenario --e2e finds the others as it does in a
# build tree, and links each one into /usr/local/bin (on PATH).
PROGRAMS=(
    cache-svc/cache-svc
    session-svc/session-svc
    binder-svc/binder-svc
    controller-svc/controller-svc
    tools/ctl/basalt-ctl
    tools/tap/basalt-tap
    tools/apisim/basalt-apisim
    tools/scenario/basalt-scenario
)
PREFIX=/opt/basalt

say() { echo "image: $*"; }
die() {
    echo "image: error: $*" >&2
    exit 1
}
bh() { buildah --storage-driver "$DRIVER" "$@"; }

# --- what the script needs ----------------------------------------------------
[ "$(id -u)" -eq 0 ] || die "run as root (sudo make image): buildah mount and chroot need it"
for tool in cmake pkg-config readelf ldd chroot dpkg; do
    command -v "$tool" >/dev/null 2>&1 ||
        die "$tool not found: run scripts/install-deps.sh (make image does) or install it"
done
# buildah, and the CA bundle the image carries, from the machine's package
# sources, the way scripts/install-deps.sh installs: only what is missing.
missing=()
command -v buildah >/dev/null 2>&1 || missing+=(buildah)
[ -s /etc/ssl/certs/ca-certificates.crt ] || missing+=(ca-certificates)
if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || die "apt-get update failed; install ${missing[*]} by hand and re-run"
    apt-get install -y -qq --no-install-recommends "${missing[@]}" ||
        die "apt-get install ${missing[*]} failed; install them by hand and re-run"
fi

VERSION=$(sed -n 's/^project(basalt VERSION \([0-9][0-9.]*\).*/\1/p' CMakeLists.txt)
[ -n "$VERSION" ] || die "no version in CMakeLists.txt (expected 'project(basalt VERSION X.Y.Z ...')"
ARCHIVE="$BUILD/basalt-image.oci.tar"
archive_tmp=$(realpath -m "$ARCHIVE.tmp")
case "$archive_tmp" in
*:*) die "the build directory's path cannot hold a ':' (oci-archive:$archive_tmp)" ;;
esac
REVISION=$(git describe --always --dirty --abbrev=40 2>/dev/null || echo unknown)
# org.opencontainers.image.source is a URL: BASALT_IMAGE_SOURCE, else the git
# remote origin; with neither the label is left out (said below).
SOURCE=${BASALT_IMAGE_SOURCE:-$(git remote get-url origin 2>/dev/null || true)}

# --- 1. Release build ---------------------------------------------------------
start=$(date +%s)
say "building Release programs in $BUILD (make -j $JOBS)"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DBASALT_JEMALLOC=ON >/dev/null ||
    die "cmake configure of $BUILD failed (above); scripts/install-deps.sh installs what it needs"
targets=()
for p in "${PROGRAMS[@]}"; do targets+=("$(basename "$p")"); done
# Run from make, the build would print every make's directory (a sub-make's
# habit): start it as a make of its own, with its own -j.
env -u MAKELEVEL -u MAKEFLAGS -u MFLAGS cmake --build "$BUILD" -j "$JOBS" --target "${targets[@]}" ||
    die "cmake --build $BUILD failed (above)"

# --- the libraries ------------------------------------------------------------
# Every path ldd names (the loader included; not linux-vdso, which the kernel
# maps). A library ldd cannot find, or a program without jemalloc, stops here.
libs=()
for p in "${PROGRAMS[@]}"; do
    out=$(ldd "$BUILD/$p") || die "ldd $BUILD/$p failed: is it a dynamic executable?"
    if grep -q "not found" <<<"$out"; then
        die "ldd $BUILD/$p: $(grep 'not found' <<<"$out" | tr -s '\t ' ' ')"
    fi
    grep -q "libjemalloc" <<<"$out" || die "$BUILD/$p is not linked with jemalloc"
    while read -r lib; do libs+=("$lib"); done < <(awk '
        $2 == "=>" && $3 ~ /^\// { print $3; next }
        $1 ~ /^\// { print $1 }' <<<"$out")
done
mapfile -t libs < <(printf '%s\n' "${libs[@]}" | sort -u)
LOADER=$(ldd "$BUILD/${PROGRAMS[0]}" | awk '$1 ~ /^\/.*ld-linux/ { print $1 }')
[ -n "$LOADER" ] || die "ldd names no dynamic loader for $BUILD/${PROGRAMS[0]}"

# --- deploy/image/Dockerfile in step -----------------------------------------
# It cannot be built here (no registry), so check what can drift: its runtime
# stage installs the package of every library the programs link (libc6 is in
# the base), its build stage the -dev package of every pkg-config module
# CMakeLists.txt checks and protoc-c's, it builds every program, and its
# VERSION is the project's.
DOCKERFILE=deploy/image/Dockerfile
[ -f "$DOCKERFILE" ] || die "$DOCKERFILE is missing"
build_stage=$(sed -n '/^FROM .* AS build/,/^FROM .* AS runtime/{/^ *#/!p}' "$DOCKERFILE")
runtime_stage=$(sed -n '/^FROM .* AS runtime/,${/^ *#/!p}' "$DOCKERFILE")
# has_word TEXT WORD: WORD is one of TEXT's whitespace-separated words.
# (No grep -q or head after a pipe in this script: one that stops reading
# early kills the writer with SIGPIPE, which pipefail turns into a failure.)
has_word() { tr -s ' \t\\"' '\n' <<<"$1" | grep -xF -- "$2" >/dev/null; }
# pkg_of PATH: the Debian package that installed the file PATH, which dpkg
# may know under /usr or not (merged /usr), as the link or as its target.
pkg_of() {
    local real c
    real=$(readlink -f "$1")
    for c in "$1" "/usr${1#/usr}" "${1#/usr}" "$real" "/usr${real#/usr}" "${real#/usr}"; do
        dpkg -S "$c" 2>/dev/null | sed -n '1s/[:,].*//p' | grep . && return 0
    done
    return 0
}
drift=()
for p in "${PROGRAMS[@]}"; do
    out=$(ldd "$BUILD/$p")
    for soname in $(readelf -d "$BUILD/$p" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
        path=$(awk -v s="$soname" '$1 == s && $2 == "=>" { print $3 }' <<<"$out")
        pkg=$(pkg_of "$path")
        [ -n "$pkg" ] || die "no Debian package owns $path ($soname, linked by $p)"
        [ "$pkg" = libc6 ] || has_word "$runtime_stage" "$pkg" ||
            drift+=("runtime stage lacks $pkg ($soname)")
    done
    has_word "$build_stage" "$p" || drift+=("build stage does not build $p")
done
while read -r module; do
    pc=$(pkg-config --path "$module") || die "pkg-config knows no $module (scripts/install-deps.sh)"
    pkg=$(pkg_of "$pc")
    has_word "$build_stage" "$pkg" || drift+=("build stage lacks $pkg (pkg-config $module)")
done < <(sed -n 's/^ *pkg_check_modules([A-Z]* REQUIRED IMPORTED_TARGET \([^)]*\)).*/\1/p' CMakeLists.txt)
pkg=$(pkg_of "$(command -v protoc-c)")
has_word "$build_stage" "$pkg" || drift+=("build stage lacks $pkg (protoc-c)")
grep -qx "ARG VERSION=$VERSION" "$DOCKERFILE" || drift+=("ARG VERSION is not $VERSION")
if [ ${#drift[@]} -gt 0 ]; then
    printf '%s\n' "${drift[@]}" | sort -u | sed "s|^|image: $DOCKERFILE: |" >&2
    die "$DOCKERFILE is out of step with the build (above): update it"
fi
say "$DOCKERFILE is in step (packages, programs, version)"

# --- 2. assemble --------------------------------------------------------------
cleanup() {
    local ctr
    for ctr in "$BUILD_CTR" "$VERIFY_CTR"; do
        if bh containers --format '{{.ContainerName}}' 2>/dev/null | grep -x -- "$ctr" >/dev/null; then
            bh rm "$ctr" >/dev/null || echo "image: could not remove working container $ctr:" \
                "buildah --storage-driver $DRIVER rm $ctr" >&2
        fi
    done
}
cleanup # what a failed run left
trap cleanup EXIT

say "assembling $REPO:$VERSION from scratch (${#PROGRAMS[@]} programs, ${#libs[@]} libraries)"
bh from --name "$BUILD_CTR" scratch >/dev/null
ROOT=$(bh mount "$BUILD_CTR")
[ -d "$ROOT" ] || die "buildah mount $BUILD_CTR gave no directory ($ROOT)"

install -d -m 0755 "$ROOT/etc/ssl/certs" "$ROOT/usr/local/bin" "$ROOT$PREFIX"
install -d -m 1777 "$ROOT/tmp"
# The services' default ipc:// endpoints are in /tmp/basalt (a volume the
# pod's containers share hides it); 1777 so that any uid may use it.
install -d -m 1777 "$ROOT/tmp/basalt"
install -d -m 0755 -o "$USER_ID" -g "$USER_ID" "$ROOT/home/basalt"
for p in "${PROGRAMS[@]}"; do
    install -D -m 0755 "$BUILD/$p" "$ROOT$PREFIX/$p"
    ln -s "../../..$PREFIX/$p" "$ROOT/usr/local/bin/$(basename "$p")"
done
# Each library at its real directory (/lib/x86_64-linux-gnu is
# /usr/lib/x86_64-linux-gnu on a merged-/usr system), as a file under the
# name ldd gives (the soname), and the host's /lib, /lib64 links where the
# image has their target, so that the loader's paths resolve as on the host.
for lib in "${libs[@]}"; do
    dir=$(readlink -f "$(dirname "$lib")")
    install -d -m 0755 "$ROOT$dir"
    cp -L --preserve=mode "$lib" "$ROOT$dir/$(basename "$lib")"
done
for d in lib lib32 lib64 libx32; do
    if [ -L "/$d" ] && [ -d "$ROOT$(readlink -f "/$d")" ]; then
        ln -s "$(readlink "/$d")" "$ROOT/$d"
    fi
done
install -m 0644 /etc/ssl/certs/ca-certificates.crt "$ROOT/etc/ssl/certs/ca-certificates.crt"
cat >"$ROOT/etc/passwd" <<EOF
root:x:0:0:root:/root:/sbin/nologin
basalt:x:$USER_ID:$USER_ID:basalt:/home/basalt:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
EOF
cat >"$ROOT/etc/group" <<EOF
root:x:0:
basalt:x:$USER_ID:
nogroup:x:65534:
EOF
# glibc's lookups: names from the files above, hosts from /etc/hosts then DNS
# (the kubelet mounts /etc/hosts and /etc/resolv.conf).
cat >"$ROOT/etc/nsswitch.conf" <<EOF
passwd: files
group: files
hosts: files dns
EOF
chmod 0644 "$ROOT/etc/passwd" "$ROOT/etc/group" "$ROOT/etc/nsswitch.conf"
bh umount "$BUILD_CTR" >/dev/null

DESCRIPTION="Basalt, a Volcano-compatible batch and gang scheduler for Kubernetes:"
DESCRIPTION+=" cache-svc, session-svc, binder-svc, controller-svc and the tools"
DESCRIPTION+=" basalt-ctl, basalt-tap, basalt-apisim, basalt-scenario"
labels=(
    --label "org.opencontainers.image.title=basalt"
    --label "org.opencontainers.image.description=$DESCRIPTION"
    --label "org.opencontainers.image.version=$VERSION"
    --label "org.opencontainers.image.revision=$REVISION"
    --label "org.opencontainers.image.created=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
)
if [ -n "$SOURCE" ]; then
    labels+=(--label "org.opencontainers.image.source=$SOURCE")
else
    say "no source URL (set BASALT_IMAGE_SOURCE or a git remote origin):" \
        "label org.opencontainers.image.source left out"
fi
bh config --created-by "deploy/image/build.sh: programs, libraries and /etc copied in with buildah mount" \
    --user "$USER_ID:$USER_ID" --workingdir /home/basalt \
    --env PATH=/usr/local/bin --env HOME=/home/basalt "${labels[@]}" "$BUILD_CTR"

# Commit without a name: the names move to it only once it is verified, so
# a failed run leaves the previous image as it was.
IMAGE_ID=$(bh commit --quiet --rm "$BUILD_CTR")
[ -n "$IMAGE_ID" ] || die "buildah commit $BUILD_CTR gave no image id"

# --- 3. verify ----------------------------------------------------------------
say "verifying image ${IMAGE_ID:0:12} in working container $VERIFY_CTR"
verified=0
drop_unverified() {
    cleanup
    [ "$verified" -eq 1 ] || bh rmi "$IMAGE_ID" >/dev/null 2>&1 || true
}
trap drop_unverified EXIT
bh from --pull=never --name "$VERIFY_CTR" "$IMAGE_ID" >/dev/null
ROOT=$(bh mount "$VERIFY_CTR")
user=$(bh inspect --type image --format '{{.OCIv1.Config.User}}' "$IMAGE_ID")
[ "$user" = "$USER_ID:$USER_ID" ] || die "image user is '$user', not $USER_ID:$USER_ID"
for d in tmp tmp/basalt; do
    [ "$(stat -c %a "$ROOT/$d")" = 1777 ] || die "/$d in the image is not mode 1777"
done
for sh in bin/sh usr/bin/sh bin/bash usr/bin/bash; do
    [ ! -e "$ROOT/$sh" ] || die "the image has /$sh: it should have no shell"
done
failed=0
for p in "${PROGRAMS[@]}"; do
    name=$(basename "$p")
    # The image's loader lists what the program needs, resolved in the image.
    if ! deps=$(chroot "$ROOT" "$LOADER" --list "$PREFIX/$p" 2>&1) ||
        grep -q "not found" <<<"$deps"; then
        echo "image: FAIL $name: the loader in the image cannot resolve its libraries:" >&2
        grep "not found" <<<"$deps" >&2 || echo "$deps" >&2
        failed=$((failed + 1))
        continue
    fi
    if out=$(chroot --userspec="$USER_ID:$USER_ID" "$ROOT" "/usr/local/bin/$name" --version 2>&1) &&
        [ "$out" = "$name $VERSION" ]; then
        echo "  $out"
    else
        echo "image: FAIL $name --version as uid $USER_ID printed: $out" >&2
        failed=$((failed + 1))
    fi
done
[ "$failed" -eq 0 ] || die "$failed program(s) failed in the image (above); the image is dropped," \
    "$REPO:$VERSION and :latest stay as they were"
# Then the image at work: deploy/image/smoke.yaml end to end, i.e. basalt-apisim
# and the four services started from the image by basalt-scenario, as uid
# 65532, over ipc:// sockets in the image's /tmp. (--bin-dir because a chroot
# has no /proc/self/exe; in a container the default finds /opt/basalt.) The
# file goes into the working container only, never into the image.
install -m 0644 deploy/image/smoke.yaml "$ROOT/tmp/smoke.yaml"
if out=$(chroot --userspec="$USER_ID:$USER_ID" "$ROOT" /usr/local/bin/basalt-scenario --e2e \
    --bin-dir "$PREFIX" /tmp/smoke.yaml 2>&1); then
    echo "  $(head -n 1 <<<"$out")"
else
    echo "$out" >&2
    die "the smoke scenario failed in the image (above); the image is dropped," \
        "$REPO:$VERSION and :latest stay as they were"
fi
bh umount "$VERIFY_CTR" >/dev/null
bh rm "$VERIFY_CTR" >/dev/null
verified=1

# --- 4. name it, ship it ------------------------------------------------------
# The image these names had before is removed once no name holds it.
old_ids=()
for tag in "$VERSION" latest; do
    id=$(bh inspect --type image --format '{{.FromImageID}}' "$REPO:$tag" 2>/dev/null || true)
    [ -n "$id" ] && [ "$id" != "$IMAGE_ID" ] && old_ids+=("$id")
done
bh tag "$IMAGE_ID" "$REPO:$VERSION" "$REPO:latest"
for id in $(printf '%s\n' "${old_ids[@]}" | sort -u); do
    if ! bh images --all --no-trunc --format '{{.ID}} {{.Name}}:{{.Tag}}' |
        grep "^sha256:$id " | grep -v '<none>:<none>' >/dev/null; then
        bh rmi "$id" >/dev/null || say "could not remove the previous image ${id:0:12}"
    fi
done

rm -f "$ARCHIVE" "$ARCHIVE.tmp"
bh push --quiet "$REPO:$VERSION" "oci-archive:$archive_tmp:$REPO:$VERSION" ||
    die "buildah push of $REPO:$VERSION to oci-archive:$ARCHIVE failed"
mv "$ARCHIVE.tmp" "$ARCHIVE"

size=$(bh images --format '{{.Size}}' "$REPO:$VERSION" | sed -n 1p)
say "ok: $REPO:$VERSION and $REPO:latest, image ${IMAGE_ID:0:12}, $size;" \
    "archive $ARCHIVE ($(du -h "$ARCHIVE" | cut -f1)); $(($(date +%s) - start)) s"
