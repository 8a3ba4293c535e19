"""AWS adapters: DynamoDB, S3, Lambda invoke, API Gateway Management API, Step Functions.

Every adapter takes its boto3 client in the constructor and translates botocore errors
into ``errors.StoreError`` (calls.py); none creates a client or reads env vars.
Import from the modules (``from mdcrawl.adapters.aws.stores import aws_stores``): this
package imports nothing itself, so ``infra/`` can read ``schema.py`` without boto3.

    stores.py       AwsStores, aws_stores(...), SystemClock
    jobs.py         DynamoDbJobStore        frontier.py     DynamoDbFrontier
    cache.py        DynamoDbContentCache    pages.py        DynamoDbPageStore
    events.py       DynamoDbEventLog        connections.py  DynamoDbConnectionStore
    eventbuffer.py  BufferedEventLog (a block's events in one write)
    blobs.py        S3BlobStore (multipart.py streams large objects)
    pusher.py       ApiGatewayPusher        invoker.py      LambdaInvoker
    starter.py      StepFunctionsStarter    payloads.py     JSON for Lambda payloads
"""
