# syntax=docker/dockerfile:1
# toolgate image: the sidecar (default) and `toolgate inject-webhook`.
#   docker build -t ghcr.io/toolgate/toolgate:0.1.0 .

# Build: install everything the lockfile says, compile src/ to dist/.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Scripts stay off: the only install script the project allows is the node@24 devDependency's,
# and the base image already is Node 24 (tsc is run with that node, not through the node package's shim).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN node node_modules/typescript/bin/tsc -p tsconfig.build.json

# Production dependencies only (no typescript, no node@24 package: the image's Node runs it).
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# Node's compile cache: V8 code for every module toolgate can load, so a start reads it instead of compiling
# (src/warm-compile-cache.ts). Node keeps one cache per user ID: it is filled as the user the sidecar runs as,
# at the paths it runs from. A sidecar run as another UID compiles as before.
FROM node:24-bookworm-slim AS compile-cache
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY proto ./proto
USER 1000:1000
RUN NODE_COMPILE_CACHE=/tmp/compile-cache node dist/warm-compile-cache.js

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
COPY --chown=root:root package.json ./
# Read at run time beside dist/: the gRPC API and the external validators' client load their messages from it.
COPY --chown=root:root proto ./proto
# Read, never written: on a read-only root filesystem Node skips the write at exit without a word.
COPY --from=compile-cache --chown=root:root /tmp/compile-cache ./compile-cache
ENV NODE_COMPILE_CACHE=/app/compile-cache
# Numeric so the kubelet can verify runAsNonRoot; files stay root-owned and read-only to it.
USER 1000:1000
EXPOSE 8080 9090 8443
# node is PID 1 with no shell in between: toolgate handles SIGTERM itself and drains.
ENTRYPOINT ["node", "dist/cli.js"]
