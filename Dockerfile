# The emulator as a container image: built on Debian 12, holding what running needs only.
#
#   docker build -t batchai-emulator .
#   docker run --privileged -p 10443:10443 -p 10000:10000 -p 10004:10004 -p 10447:10447 \
#     -p 10080:10080 -v batchai-data:/data batchai-emulator
#
# --privileged: the jobs run in bubblewrap sandboxes and mount their shares with FUSE inside the
# container. The data directory is the volume /data (its tls/cert.pem is the ARM endpoint's
# certificate to trust). The emulator listens on every address of the container's network
# (--bind-all, the default command) and its URLs name 127.0.0.1 and the default ports, which the
# published ports reach. Arguments after the image replace that default command: add
# --bind-all to them unless the container shares the host's network (--network host), and
# --public-host NAME where clients reach the container by another name than 127.0.0.1 (a CI
# service's alias: GitLab's docker executor).
#
# BASE is the Debian 12 image to build on (a local one where no registry is reachable).
ARG BASE=debian:12

# ---- what running needs: the runtime packages, the volume, the entry point ----
FROM ${BASE} AS runtime
COPY tools/container/runtime-packages /usr/share/batchai-emulator/runtime-packages
# Installed unless the base has them all (an offline base made with them).
RUN packages=$(grep -v '^#' /usr/share/batchai-emulator/runtime-packages) && \
    missing=$(for p in $packages; do \
                dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed || echo "$p"; \
              done) && \
    if [ -n "$missing" ]; then \
      apt-get update -q && \
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing && \
      rm -rf /var/lib/apt/lists/*; \
    fi
VOLUME /data
# ARM (HTTPS), Blob, File, Batch, the proxy front door.
EXPOSE 10443 10000 10004 10447 10080
COPY tools/container/healthcheck /usr/local/bin/batchai-emulator-healthcheck
HEALTHCHECK --interval=5s --timeout=3s --start-period=5s CMD ["/usr/local/bin/batchai-emulator-healthcheck"]
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/batchai-emulator", "--location", "/data"]
CMD ["--bind-all"]

# ---- compiling: tools/setup's run-time list (the compiler and the -dev libraries) ----
FROM ${BASE} AS build
COPY . /src
WORKDIR /src
# A context that holds the programs built already (build/ of a Debian 12 machine, as the project's
# image test gives) is not compiled again; this repository's .dockerignore leaves build/ out.
RUN programs="build/emulator/batchai-emulator build/emulator/bai-node-ssh build/tools/bai \
              build/fuse_mounts/bai-blobfuse build/fuse_mounts/bai-sharefuse" && \
    if ls $programs >/dev/null 2>&1; then \
      echo "the context's programs, as built"; \
    else \
      tools/setup && tools/build build --target batchai-emulator bai bai-node-ssh bai-blobfuse bai-sharefuse; \
    fi

# ---- the image ----
FROM runtime AS image
COPY --from=build /src/build/emulator/batchai-emulator /src/build/emulator/bai-node-ssh /src/build/tools/bai \
     /src/build/fuse_mounts/bai-blobfuse /src/build/fuse_mounts/bai-sharefuse /usr/local/bin/
