"""starfeed: a self-hosted feed aggregator on serverless AWS.

The package follows the pipeline: schedule -> fetch -> parse -> store -> render -> serve.
"""

__version__ = "0.1.0"
PROJECT_URL = "https://github.com/starfeed/starfeed"
USER_AGENT = f"starfeed/{__version__} (+{PROJECT_URL})"
