# Prometheus server built from its Go module (pinned in
# deploy/tools/prometheus), static, FROM scratch, without the web UI's npm
# assets: the HTTP API, rules and alerts work, the UI pages do not.
# lockstep is included for `lockstep healthcheck`. The config and rules
# are mounted by docker-compose.yml from deploy/prometheus.
FROM scratch
COPY rootfs/ /
ENV PATH=/usr/local/bin
WORKDIR /prometheus
EXPOSE 9090
ENTRYPOINT ["/usr/local/bin/prometheus"]
