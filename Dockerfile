# Build stage: the release binary.
FROM swift:6.3-bookworm AS build
WORKDIR /src
COPY Package.swift ./
COPY Plugins ./Plugins
COPY Fuzz ./Fuzz
COPY Sources ./Sources
COPY Tests ./Tests
COPY bench ./bench
RUN swift build -c release --product portcullis --static-swift-stdlib \
    && cp "$(swift build -c release --show-bin-path)/portcullis" /portcullis

# Run stage: Debian slim with the runtime libraries only.
FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl libcurl4 \
    && rm -rf /var/lib/apt/lists/* && useradd --system --home /app portcullis
WORKDIR /app
COPY --from=build /portcullis /usr/local/bin/portcullis
COPY Config ./Config
RUN mkdir -p /app/.portcullis /app/Keys && chown -R portcullis /app
USER portcullis
EXPOSE 8080
# The image listens beyond loopback, so the server refuses to seed the demo directory's plaintext development
# credentials (which every README reader knows) unless the operator asks for the demo explicitly with
# PORTCULLIS_DEMO=1. For real use, mount your own Config/ (passwordHash/secretHash values) over /app/Config.
ENV PORTCULLIS_DEMO=0
ENTRYPOINT ["/usr/local/bin/portcullis"]
CMD ["serve", "--host", "0.0.0.0"]
