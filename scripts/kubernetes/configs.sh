# shellcheck shell=bash
# Sourced by scripts/setup-kubernetes.sh: the configuration files of containerd, CNI and the
# kubelet, the runtime wrapper, and the pause image.
#
# Needs: die, ETC, LIB, RUN, PKI, BIN_DIR, ports, NODE_NAME, RUNSC, POD_SUBNET.

K8S_LIB_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PAUSE_IMAGE=ai-toolbelt.local/pause:1

# The runtime wrapper and CNI plugin, copied where containerd finds them (the repository may move).
install_helpers() {
  mkdir -p "$LIB/bin" "$LIB/cni/bin"
  sed "s|^RUNSC=.*|RUNSC=\"\${AI_TOOLBELT_RUNSC:-$RUNSC}\"|" "$K8S_LIB_DIR/runsc-wrapper.sh" >"$LIB/bin/runsc-wrapper"
  install -m 0755 "$K8S_LIB_DIR/cni-pod-veth.py" "$LIB/cni/bin/pod-veth"
  chmod 0755 "$LIB/bin/runsc-wrapper"
  ln -sf /usr/lib/cni/host-local "$LIB/cni/bin/host-local"
  ln -sf /usr/lib/cni/loopback "$LIB/cni/bin/loopback"
  ln -sf "$BIN_DIR/kubectl" "$LIB/bin/kubectl"
}

# containerd: a second instance beside the Docker engine's, with its own root, state and socket.
# Its only runtime is runsc (also the default: nothing falls back to runc). restrict_oom_score_adj:
# this machine may lack CAP_SYS_RESOURCE, and the kubelet asks pause containers for -998.
# The network namespaces are mounted under its state directory, not /var/run/netns.
write_containerd_config() {
  mkdir -p "$ETC/cni"
  cat >"$ETC/containerd.toml" <<EOF
version = 2
root = "$LIB/containerd"
state = "$RUN/containerd"

[grpc]
  address = "$RUN/containerd.sock"

[plugins."io.containerd.internal.v1.opt"]
  path = "$LIB/opt"

[plugins."io.containerd.grpc.v1.cri"]
  disable_tcp_service = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runsc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runsc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runsc.options]
        BinaryName = "$LIB/bin/runsc-wrapper"
        Root = "$RUN/runsc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$LIB/cni/bin"
    conf_dir = "$ETC/cni"
    max_conf_num = 1
EOF
  cat >"$ETC/cni/10-pod-veth.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "ai-toolbelt-no-network",
  "plugins": [
    {
      "type": "pod-veth",
      "ipam": {
        "type": "host-local",
        "ranges": [[{ "subnet": "$POD_SUBNET" }]],
        "dataDir": "$LIB/cni/networks"
      }
    }
  ]
}
EOF
}

# The kubelet: loopback only, webhook authorization, the cluster's CA for clients. Image garbage
# collection is off (the images are imported, never pulled: a collected one could not come back)
# and eviction only under real exhaustion. It must not touch the host: no iptables chains, its
# own oom_score_adj left as it is, pod logs under $LIB.
write_kubelet_config() {
  cat >"$ETC/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $KUBELET_PORT
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
readOnlyPort: 0
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: true }
  x509: { clientCAFile: $PKI/ca.pem }
authorization: { mode: Webhook }
tlsCertFile: $PKI/kubelet.pem
tlsPrivateKeyFile: $PKI/kubelet-key.pem
containerRuntimeEndpoint: unix://$RUN/containerd.sock
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
makeIPTablesUtilChains: false
oomScoreAdj: 0
podLogsDir: $LIB/pod-logs
resolvConf: ""
podPidsLimit: 256
maxPods: 32
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%
  imagefs.available: 1%
  nodefs.inodesFree: 1%
registerNode: true
rotateCertificates: false
serverTLSBootstrap: false
EOF
}

# write_pause_image FILE ARCH: the pause image as an OCI archive, one layer holding the static
# pause binary, run as nobody.
write_pause_image() {
  python3 - "$BIN_DIR/pause" "$1" "$PAUSE_IMAGE" "$2" <<'PY'
import hashlib, io, json, sys, tarfile
binary, out, name, arch = sys.argv[1:]
def blob(data):
    return "sha256:" + hashlib.sha256(data).hexdigest(), data
layer = io.BytesIO()
with tarfile.open(fileobj=layer, mode="w", format=tarfile.PAX_FORMAT) as tar:
    info = tar.gettarinfo(binary, arcname="pause")
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    info.mode = 0o755
    with open(binary, "rb") as f:
        tar.addfile(info, f)
layer_digest, layer_data = blob(layer.getvalue())
config_digest, config_data = blob(json.dumps({
    "architecture": arch, "os": "linux",
    "config": {"Entrypoint": ["/pause"], "User": "65535:65535"},
    "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
}).encode())
manifest_digest, manifest_data = blob(json.dumps({
    "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest, "size": len(config_data)},
    "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": layer_digest, "size": len(layer_data)}],
}).encode())
index = json.dumps({"schemaVersion": 2, "manifests": [{
    "mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": manifest_digest, "size": len(manifest_data),
    "platform": {"architecture": arch, "os": "linux"},
    "annotations": {"io.containerd.image.name": name, "org.opencontainers.image.ref.name": name.rsplit(":", 1)[1]},
}]}).encode()
with tarfile.open(out, "w") as tar:
    def add(path, data):
        info = tarfile.TarInfo(path)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    add("oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
    add("index.json", index)
    for digest, data in ((layer_digest, layer_data), (config_digest, config_data), (manifest_digest, manifest_data)):
        add("blobs/sha256/" + digest.split(":")[1], data)
PY
}
