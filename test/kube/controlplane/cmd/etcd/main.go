// Command etcd is etcd's own server entry point, built at the version the
// pinned Kubernetes release requires, so the API server's storage is the one
// it is released against.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
