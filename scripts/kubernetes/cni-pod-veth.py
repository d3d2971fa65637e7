#!/usr/bin/env python3
"""CNI plugin of the local cluster: gives a pod's network namespace an eth0 and nothing else.

containerd 1.6's CRI insists on an eth0 with an address from CNI before it starts a pod, but the
pods here have no network: runsc runs them with --network=none, so gVisor never looks at this
namespace. This plugin makes a veth pair whose two ends both stay inside the pod's namespace
(this kernel has no dummy, macvlan or ipvlan links) and takes the address from Debian's host-local
IPAM plugin. Nothing on the host's side changes: no link, route or firewall rule.
"""
import json
import os
import subprocess
import sys

SUPPORTED = ["0.3.0", "0.3.1", "0.4.0", "1.0.0"]
PEER = "pod-veth-peer"


def fail(message, code=100):
    print(json.dumps({"cniVersion": "1.0.0", "code": code, "msg": message}))
    sys.exit(1)


def in_netns(netns, *args, check=True):
    return subprocess.run(
        ["nsenter", f"--net={netns}", "ip", *args], capture_output=True, text=True, check=check
    )


def ipam(config, raw):
    plugin = os.path.join(os.environ.get("CNI_PATH", "").split(":")[0], config["ipam"]["type"])
    done = subprocess.run([plugin], input=raw, capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"IPAM {config['ipam']['type']}: {done.stdout.strip() or done.stderr.strip()}")
    return json.loads(done.stdout) if done.stdout.strip() else {}


def main():
    command = os.environ.get("CNI_COMMAND", "")
    if command == "VERSION":
        print(json.dumps({"cniVersion": "1.0.0", "supportedVersions": SUPPORTED}))
        return
    raw = sys.stdin.read()
    config = json.loads(raw)
    netns = os.environ.get("CNI_NETNS", "")
    ifname = os.environ.get("CNI_IFNAME", "eth0")
    if command == "ADD":
        if not netns:
            fail("CNI_NETNS is not set")
        result = ipam(config, raw)
        try:
            in_netns(netns, "link", "add", ifname, "type", "veth", "peer", "name", PEER)
            for link in (ifname, PEER):
                in_netns(netns, "link", "set", link, "up")
            for ip in result.get("ips", []):
                in_netns(netns, "addr", "add", ip["address"], "dev", ifname)
            mac = in_netns(netns, "-j", "link", "show", ifname).stdout
            mac = json.loads(mac)[0].get("address", "")
        except subprocess.CalledProcessError as error:
            fail(f"{' '.join(error.cmd[2:])}: {error.stderr.strip()}")
        result["cniVersion"] = config.get("cniVersion", "1.0.0")
        result["interfaces"] = [{"name": ifname, "mac": mac, "sandbox": netns}]
        for ip in result.get("ips", []):
            ip["interface"] = 0
            ip.pop("gateway", None)
        result.pop("routes", None)
        print(json.dumps(result))
    elif command == "DEL":
        if netns and os.path.exists(netns):
            in_netns(netns, "link", "del", ifname, check=False)
        ipam(config, raw)
    elif command == "CHECK":
        pass
    else:
        fail(f"unknown CNI_COMMAND {command!r}", code=4)


if __name__ == "__main__":
    main()
