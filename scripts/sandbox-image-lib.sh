# Shared by setup-sandbox.sh and add-python-packages.sh (sourced): what every sandbox image
# gets on `docker import`, and how its Python distributions are listed for its label.

# What `docker import` does not keep: the environment and command every image here has.
IMAGE_CONFIG=(
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
  --change 'ENV LANG=C.UTF-8'
  --change 'ENV MPLBACKEND=Agg'
  --change 'CMD ["python3"]'
)

# The distributions in a root file system, as `name==version,...` (the ai-toolbelt.packages label).
list_packages() {
  chroot "$1" python3 - <<'PY'
import importlib.metadata as m
names = sorted({d.metadata['Name'] for d in m.distributions() if d.metadata['Name']}, key=str.lower)
print(','.join(f'{n}=={m.version(n)}' for n in names))
PY
}
