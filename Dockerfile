# Tavolo's image: the referee, the `tavolo` command and the Python bot SDK (built-in bots).
#   docker build -t tavolo .
#   docker run --rm -p 50051:50051 tavolo                      # tavolo serve on 0.0.0.0:50051
#   docker run --rm tavolo play heuristic random --seed demo --deals 4
#   docker run --rm -v "$PWD:/data" tavolo verify /data/record.jsonl
#   docker run --rm --user "$(id -u):$(id -g)" -v "$PWD/results:/data" $SANDBOX tavolo \
#       tournament run /data/quick.toml --db /data/quick.db        # see the README
#   add  -p 127.0.0.1:8080:8080 ... --web 0.0.0.0:8080  for the live view (docs/live-view.md)
# A Dask cluster's scheduler and workers (docs/cluster.md): the same image, another entrypoint.
#   docker run -d --network host --entrypoint dask tavolo scheduler --host 10.0.0.1 --no-dashboard
#   docker run -d --network host $SANDBOX -v /srv/event:/srv/event --entrypoint dask tavolo \
#       worker tcp://10.0.0.1:8786 --nworkers 2 --nthreads 1 --host 10.0.0.2 --no-dashboard
# Every bot runs in a bubblewrap sandbox, which needs new namespaces and a /proc of its own:
#   SANDBOX="--security-opt seccomp=unconfined --security-opt apparmor=unconfined
#            --security-opt systempaths=unconfined"                 (docs/security.md)
FROM python:3.11-slim

# bubblewrap for the bots' sandboxes; prlimit (util-linux) is already in the base image.
RUN apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap \
    && rm -rf /var/lib/apt/lists/*

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /opt/tavolo
# Only what the package needs: a change to tests or docs does not rebuild this layer.
# The tavolo distribution ships the Python SDK (clients/python/tavolo_bot) the built-in
# bots run from: one `pip install .` installs both.
COPY pyproject.toml README.md ./
COPY clients/python/tavolo_bot ./clients/python/tavolo_bot
COPY referee ./referee
COPY tournaments ./tournaments
RUN pip install . \
    && useradd --create-home --uid 10001 tavolo

USER tavolo
WORKDIR /home/tavolo
EXPOSE 50051 8080
ENTRYPOINT ["tavolo"]
CMD ["serve", "--listen", "0.0.0.0:50051", "--records", "/home/tavolo/records"]
