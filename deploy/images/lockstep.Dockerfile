# Lockstep: every service and the node agents. Built FROM scratch by
# deploy/build.sh from a context it assembles: the static lockstep binary in
# /usr/local/bin, and a static busybox (Debian's busybox-static) in /bin with
# its applet links, because agents run ranks as real processes and job
# commands expect sh, sleep and coreutils. The services ignore the shell.
FROM scratch
COPY rootfs/ /
ENV PATH=/usr/local/bin:/bin
CMD ["lockstep", "--help"]
