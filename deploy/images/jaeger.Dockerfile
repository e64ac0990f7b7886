# Jaeger v2 all-in-one (OTLP receiver, in-memory storage, query API and UI)
# built from its Go module (pinned in deploy/tools/jaeger), static, FROM
# scratch. lockstep is included for `lockstep healthcheck`.
FROM scratch
COPY rootfs/ /
ENV PATH=/usr/local/bin
# Jaeger listens on localhost unless told otherwise (its own image sets this).
ENV JAEGER_LISTEN_HOST=0.0.0.0
EXPOSE 4317 4318 16686 13133
ENTRYPOINT ["/usr/local/bin/jaeger"]
