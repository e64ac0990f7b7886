# etcd and etcdctl built from their Go modules (pinned in deploy/tools/etcd),
# static, FROM scratch. lockstep is included for `lockstep healthcheck`.
FROM scratch
COPY rootfs/ /
ENV PATH=/usr/local/bin
EXPOSE 2379 2380
ENTRYPOINT ["/usr/local/bin/etcd"]
