"""torchlike.hub: mirrors ``torch.hub`` as it behaves with the network unplugged.

NOTE [ hub without a network ]
torchlike never downloads.  Everything ``torch.hub`` does from local files works as it does
there: ``load(dir, model, source="local")`` runs ``dir/hubconf.py``'s entry point; ``list`` /
``help`` / ``load`` of a GitHub repo use the copy in the hub cache (``get_dir()``, where
PyTorch put it: ``<owner>_<name>_<ref>``, and ``main`` / ``master`` without a ref, as PyTorch
decides offline), with PyTorch's trust check; ``load_state_dict_from_url`` loads a checkpoint
already in ``<hub dir>/checkpoints`` (a file PyTorch downloaded is found there) or copies a
``file://`` URL there.  Anything that would need the network raises a RuntimeError naming the
file or directory to provide.  The cache directory is PyTorch's (``$TORCH_HOME/hub``), so what
PyTorch downloaded is found.  A ``hubconf.py`` that imports ``torch`` gets torchlike only when
``torch`` is torchlike (``python -m torchlike``, ``torchlike.install_as_torch()``).
"""
import contextlib
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import uuid
import warnings
import zipfile
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load",
           "load_state_dict_from_url", "set_dir"]

ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
VAR_DEPENDENCY = "dependencies"
MODULE_HUBCONF = "hubconf.py"
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
READ_DATA_CHUNK = 128 * 1024
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")

_hub_dir = None


def get_dir():
    """Mirrors ``torch.hub.get_dir``: ``set_dir``'s directory, else ``$TORCH_HOME/hub``
    (``$TORCH_HOME`` defaults to ``$XDG_CACHE_HOME/torch``, that to ``~/.cache/torch``)."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    home = os.path.expanduser(os.getenv(
        ENV_TORCH_HOME, os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "torch")))
    return os.path.join(home, "hub")


def set_dir(d):
    """Mirrors ``torch.hub.set_dir``."""
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


# --- hubconf.py --------------------------------------------------------------------------------

@contextlib.contextmanager
def _add_to_sys_path(path):
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_hubconf(repo_dir):
    path = os.path.join(repo_dir, MODULE_HUBCONF)
    spec = importlib.util.spec_from_file_location(MODULE_HUBCONF, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _load_entry_from_hubconf(module, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    dependencies = getattr(module, VAR_DEPENDENCY, None)
    if dependencies is not None:
        missing = [d for d in dependencies if importlib.util.find_spec(d) is None]
        if missing:
            raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    func = getattr(module, model, None) if model in dir(module) else None
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


# --- GitHub repos: the hub cache only ----------------------------------------------------------

def _parse_repo_info(github):
    repo_info, ref = github.split(":") if ":" in github else (github, None)
    owner, name = repo_info.split("/")
    if ref is None:   # PyTorch offline: whichever of main / master is in the cache
        ref = next((r for r in ("main", "master")
                    if os.path.exists(os.path.join(get_dir(), f"{owner}_{name}_{r}"))), None)
        if ref is None:
            raise RuntimeError(f"torchlike.hub does not download (NOTE [ hub without a network "
                               f"]), and the repo {owner}/{name} could not be found in the "
                               f"cache ({get_dir()})")
    return owner, name, ref


def _check_repo_is_trusted(owner, name, owner_name_branch, trust_repo):
    """PyTorch's trust check: a repo runs once it is on the trusted list (or its owner is
    PyTorch's, or it is an older cache entry); otherwise the user is asked."""
    hub_dir = get_dir()
    path = os.path.join(hub_dir, "trusted_list")
    if not os.path.exists(path):
        Path(path).touch()
    with open(path) as f:
        trusted = tuple(line.strip() for line in f)
    legacy = next(os.walk(hub_dir))[1]
    owner_name = f"{owner}_{name}"
    is_trusted = (owner_name in trusted or owner_name_branch in legacy
                  or owner in _TRUSTED_REPO_OWNERS)
    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        response = input(
            f"The repository {owner_name} does not belong to the list of trusted repositories "
            "and as such cannot be downloaded. Do you trust this repository and wish to add it "
            "to the trusted list of repositories (y/N)?")
        if response.lower() in ("y", "yes"):
            if is_trusted:
                print("The repository is already trusted.")
        elif response.lower() in ("n", "no", ""):
            raise Exception("Untrusted repository.")
        else:
            raise ValueError(f"Unrecognized response {response}.")
    if not is_trusted:
        with open(path, "a") as f:
            f.write(owner_name + "\n")


def _get_cache(github, force_reload, trust_repo, verbose=True):
    """The cached directory of ``github`` (PyTorch's ``_get_cache_or_reload`` without the
    reload: NOTE [ hub without a network ])."""
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    owner, name, ref = _parse_repo_info(github)
    owner_name_branch = "_".join([owner, name, ref.replace("/", "_")])
    repo_dir = os.path.join(hub_dir, owner_name_branch)
    _check_repo_is_trusted(owner, name, owner_name_branch, trust_repo)
    if force_reload or not os.path.exists(repo_dir):
        raise RuntimeError(
            f"torchlike.hub does not download (NOTE [ hub without a network ]): "
            f"{'force_reload=True asks for a fresh download of' if force_reload else 'no copy of'}"
            f" {owner}/{name}:{ref}{'' if force_reload else f' in {repo_dir}'}. Put the "
            f"repository there (or anywhere, and use source='local').")
    if verbose:
        sys.stderr.write(f"Using cache found in {repo_dir}\n")
    return repo_dir


def list(github, force_reload=False, skip_validation=False, trust_repo="check", verbose=True):
    """Mirrors ``torch.hub.list``: the entry points of the cached repo ``github``
    ("owner/name[:ref]"), i.e. the public callables of its ``hubconf.py``."""
    repo_dir = _get_cache(github, force_reload, trust_repo, verbose=verbose)
    with _add_to_sys_path(repo_dir):
        module = _import_hubconf(repo_dir)
    return [f for f in dir(module) if callable(getattr(module, f)) and not f.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo="check"):
    """Mirrors ``torch.hub.help``: the docstring of entry point ``model`` of the cached repo
    ``github``."""
    repo_dir = _get_cache(github, force_reload, trust_repo, verbose=True)
    with _add_to_sys_path(repo_dir):
        module = _import_hubconf(repo_dir)
    return _load_entry_from_hubconf(module, model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False,
         verbose=True, skip_validation=False, **kwargs):
    """Mirrors ``torch.hub.load``: ``model(*args, **kwargs)``, the entry point of the
    ``hubconf.py`` in directory ``repo_or_dir`` (``source="local"``) or in the cached GitHub
    repo ``repo_or_dir`` (NOTE [ hub without a network ]).

    Example::

        net = torchlike.hub.load("path/to/repo", "tiny_net", source="local", width=8)
    """
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = _get_cache(repo_or_dir, force_reload, trust_repo, verbose=verbose)
    with _add_to_sys_path(repo_or_dir):
        entry = _load_entry_from_hubconf(_import_hubconf(repo_or_dir), model)
        return entry(*args, **kwargs)


# --- checkpoints -------------------------------------------------------------------------------

def _local_path(url):
    """The file a ``file://`` URL names; a RuntimeError for any URL that needs the network."""
    parts = urlparse(url)
    if parts.scheme != "file":
        raise RuntimeError(f"torchlike.hub does not download (NOTE [ hub without a network ]): "
                           f"cannot fetch {url!r}; pass a file:// URL, or put the file where "
                           f"it is looked for first")
    return url2pathname(parts.path)


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Mirrors ``torch.hub.download_url_to_file`` for ``file://`` URLs: copies the file to
    ``dst`` (through a temporary file, checking the SHA256 prefix ``hash_prefix`` when
    given); other URLs raise (NOTE [ hub without a network ])."""
    src = _local_path(url)
    dst = os.path.expanduser(dst)
    tmp = f"{dst}.{uuid.uuid4().hex}.partial"
    try:
        sha256 = hashlib.sha256()
        with open(src, "rb") as fin, open(tmp, "wb") as fout:
            while chunk := fin.read(READ_DATA_CHUNK):
                fout.write(chunk)
                sha256.update(chunk)
        if hash_prefix is not None:
            digest = sha256.hexdigest()
            if digest[:len(hash_prefix)] != hash_prefix:
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got '
                                   f'"{digest}")')
        shutil.move(tmp, dst)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _safe_extract_zip(zip_file, extract_to):
    """Extract, refusing entries that would land outside ``extract_to`` (PyTorch's checks)."""
    extract_to = Path(extract_to).resolve(strict=False)
    for member in zip_file.infolist():
        filename = os.path.normpath(member.filename)
        if filename.startswith(("/", "\\")) or (len(filename) >= 2 and filename[1] == ":"
                                                 and filename[0].isalpha()):
            raise ValueError(f"Archive entry has absolute path: {member.filename}")
        if ".." in re.split(r"[/\\]", filename):
            raise ValueError(f"Archive entry contains directory traversal: {member.filename}")
        if not (extract_to / filename).resolve(strict=False).is_relative_to(extract_to):
            raise ValueError(f"Archive entry escapes target directory: {member.filename}")
        zip_file.extract(member, extract_to)


def _is_legacy_zip_format(filename):
    if zipfile.is_zipfile(filename):
        with zipfile.ZipFile(filename) as zf:
            infolist = zf.infolist()
        return len(infolist) == 1 and not infolist[0].is_dir()
    return False


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=False):
    """Mirrors ``torch.hub.load_state_dict_from_url``: ``torchlike.load`` of the file named
    by the URL in ``model_dir`` (default ``<hub dir>/checkpoints``), copied there first from a
    ``file://`` URL; a URL that needs the network raises unless the file is already there
    (NOTE [ hub without a network ]).  ``check_hash`` checks the copy against the hash
    prefix in the file's name (``name-<sha256 prefix>.ext``)."""
    from .serialization import load as _load
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        if urlparse(url).scheme != "file":
            raise RuntimeError(f"torchlike.hub does not download (NOTE [ hub without a network "
                               f"]): {url!r} is not in the cache; put the file at "
                               f"{cached_file}, or pass a file:// URL")
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        match = HASH_REGEX.search(filename) if check_hash else None
        download_url_to_file(url, cached_file, match.group(1) if match else None,
                             progress=progress)
    if _is_legacy_zip_format(cached_file):
        warnings.warn("Falling back to the old format < 1.6. This support will be deprecated in "
                      "favor of default zipfile format introduced in 1.6. Please redo "
                      "torch.save() to save it in the new zipfile format.", FutureWarning,
                      stacklevel=2)
        with zipfile.ZipFile(cached_file) as f:
            (member,) = f.infolist()
            _safe_extract_zip(f, model_dir)
        cached_file = os.path.join(model_dir, member.filename)
    return _load(cached_file, map_location=map_location, weights_only=weights_only)

