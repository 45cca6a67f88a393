# Multi-stage build: a static voxgate binary on an empty base, run as a
# non-root user, with CA certificates for calling providers over TLS.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/voxgate ./cmd/voxgate \
 && echo "voxgate:x:10001:10001:voxgate:/:/sbin/nologin" > /out/passwd \
 && mkdir -p /out/spool

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/passwd /etc/passwd
COPY --from=build /out/voxgate /voxgate
# database.spool_dir: usage kept through a database outage. Mount a
# persistent volume here (docs/billing.md, "Durability").
COPY --from=build --chown=10001:10001 /out/spool /var/lib/voxgate/spool
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["/voxgate", "serve"]
