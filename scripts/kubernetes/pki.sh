# shellcheck shell=bash
# Sourced by scripts/setup-kubernetes.sh: the cluster's own CA, serving certificates, client
# certificates and service-account key pair, made once with openssl in $PKI (EC P-256 like
# setup-sandbox-host.sh; the API server, etcd and the kubelet all accept it).
#
# Needs: log, die, PKI, NODE_NAME.

pki_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

# pki_cert NAME SUBJECT EXTENSIONS: $PKI/NAME.pem and NAME-key.pem signed by the CA (825 days).
pki_cert() {
  local name="$1" subject="$2" ext="$3"
  [ -s "$PKI/$name.pem" ] && [ -s "$PKI/$name-key.pem" ] && return 0
  pki_key "$PKI/$name-key.pem"
  openssl req -new -key "$PKI/$name-key.pem" -subj "$subject" -out "$PKI/$name.csr" 2>/dev/null
  printf '%s\n' "$ext" >"$PKI/$name.ext"
  openssl x509 -req -days 825 -sha256 -in "$PKI/$name.csr" -CA "$PKI/ca.pem" -CAkey "$PKI/ca-key.pem" \
    -CAcreateserial -out "$PKI/$name.pem" -extfile "$PKI/$name.ext" 2>/dev/null ||
    die "could not sign the certificate $name"
  rm -f "$PKI/$name.csr" "$PKI/$name.ext"
}

pki_make() {
  command -v openssl >/dev/null 2>&1 || die "openssl is missing (apt-get install openssl)"
  local old_umask
  old_umask="$(umask)"
  umask 077
  mkdir -p "$PKI"
  if [ ! -s "$PKI/ca.pem" ] || [ ! -s "$PKI/ca-key.pem" ]; then
    log "making the cluster's CA in $PKI"
    # Everything signed by an older CA goes with it.
    rm -f "$PKI"/*.pem
    pki_key "$PKI/ca-key.pem"
    openssl req -x509 -new -key "$PKI/ca-key.pem" -sha256 -days 3650 \
      -subj "/CN=ai-toolbelt local Kubernetes CA ($(hostname))" -out "$PKI/ca.pem" 2>/dev/null
  fi
  local serving='extendedKeyUsage=serverAuth' client='extendedKeyUsage=clientAuth'
  # Every component listens on the loopback address only.
  pki_cert apiserver "/CN=kube-apiserver" \
    "$serving
subjectAltName=IP:127.0.0.1,IP:$SERVICE_IP,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
  pki_cert etcd "/CN=etcd" "extendedKeyUsage=serverAuth,clientAuth
subjectAltName=IP:127.0.0.1,DNS:localhost"
  pki_cert kubelet "/CN=$NODE_NAME" "$serving
subjectAltName=IP:127.0.0.1"
  pki_cert apiserver-etcd-client "/CN=kube-apiserver-etcd-client" "$client"
  pki_cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "$client"
  pki_cert admin "/O=system:masters/CN=ai-toolbelt-admin" "$client"
  pki_cert controller-manager "/CN=system:kube-controller-manager" "$client"
  pki_cert scheduler "/CN=system:kube-scheduler" "$client"
  pki_cert kubelet-client "/O=system:nodes/CN=system:node:$NODE_NAME" "$client"
  if [ ! -s "$PKI/sa-key.pem" ]; then
    pki_key "$PKI/sa-key.pem"
    openssl pkey -in "$PKI/sa-key.pem" -pubout -out "$PKI/sa.pem" 2>/dev/null
  fi
  rm -f "$PKI/ca.srl"
  umask "$old_umask"
}

# pki_kubeconfig FILE USER: a kubeconfig for USER's certificate (embedded, so the file can be
# copied elsewhere on the machine) against the API server.
pki_kubeconfig() {
  local file="$1" user="$2" tmp
  tmp="$(mktemp "$file.XXXXXX")"
  cat >"$tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: ai-toolbelt-local
    cluster:
      server: https://127.0.0.1:$API_PORT
      certificate-authority-data: $(base64 -w0 "$PKI/ca.pem")
users:
  - name: $user
    user:
      client-certificate-data: $(base64 -w0 "$PKI/$user.pem")
      client-key-data: $(base64 -w0 "$PKI/$user-key.pem")
contexts:
  - name: ai-toolbelt-local
    context: { cluster: ai-toolbelt-local, user: $user }
current-context: ai-toolbelt-local
EOF
  chmod 600 "$tmp"
  mv "$tmp" "$file"
}
