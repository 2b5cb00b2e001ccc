import type { Command } from 'commander';
import { addServeOptions, serve, type ServeOptions } from './serve.js';
import { addUpstreamOptions, upstreamTools, type UpstreamFlags } from './upstream-options.js';

type ProxyCliOptions = ServeOptions & UpstreamFlags;

export function registerProxy(program: Command): void {
  addUpstreamOptions(
    addServeOptions(
      program
        .command('proxy')
        .description(
          'Serve the tools of an existing MCP server (--upstream URL, or -- COMMAND ARGS… on stdio) as durable tasks.',
        )
        .usage(
          '[serve options] (--upstream URL [--upstream-header "Name: value"]… | -- COMMAND [ARGS…])',
        ),
    ),
  ).action((command: string[], options: ProxyCliOptions) => {
    // With --no-worker, `taskrail worker` processes given the same upstream run the calls.
    const { install, label } = upstreamTools(command, options);
    return serve(options, install, label);
  });
}
