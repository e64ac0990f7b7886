# nats-server built from its Go module (pinned in deploy/tools/nats), static,
# FROM scratch. lockstep is included for `lockstep healthcheck`.
FROM scratch
COPY rootfs/ /
ENV PATH=/usr/local/bin
EXPOSE 4222 6222 8222
ENTRYPOINT ["/usr/local/bin/nats-server"]
