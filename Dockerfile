# Tavolo's image: the `tavolo` command and nothing else.
#   docker build -t tavolo .
#   docker run --rm tavolo play random random --seed demo
#   docker run --rm -v "$PWD:/work" tavolo verify /work/record.jsonl
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /opt/tavolo
# Only what the package needs: a change to tests or docs does not rebuild this layer.
COPY pyproject.toml README.md ./
COPY referee ./referee
COPY tournaments ./tournaments
RUN pip install . \
    && useradd --create-home --uid 10001 tavolo

USER tavolo
WORKDIR /home/tavolo
ENTRYPOINT ["tavolo"]
CMD ["--help"]
