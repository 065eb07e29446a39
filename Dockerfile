# The production image: the api and worker subcommands, without the
# embedded Temporal server of the dev build.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/paymentsd ./cmd/paymentsd

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/paymentsd /usr/local/bin/paymentsd
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/paymentsd"]
CMD ["api"]
