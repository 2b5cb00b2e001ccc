import { completable, ResourceTemplate, type McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';
import type { TaskServer } from '../src/server/app.js';
import { text } from '../src/server/tools/sleep.js';

// A 1×1 PNG and a minimal WAV, the payloads the suite checks for type and MIME only.
export const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV_BASE64 = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

/** Plain synchronous content tools of the base-protocol scenarios. */
export function registerContentTools(app: TaskServer): void {
  app.tool('test_simple_text', { description: 'Returns one text block.' }, () => ({
    content: [text('This is a simple text response for testing.')],
  }));
  app.tool('test_image_content', { description: 'Returns a PNG image.' }, () => ({
    content: [{ type: 'image', data: PNG_BASE64, mimeType: 'image/png' }],
  }));
  app.tool('test_audio_content', { description: 'Returns a WAV clip.' }, () => ({
    content: [{ type: 'audio', data: WAV_BASE64, mimeType: 'audio/wav' }],
  }));
  app.tool('test_embedded_resource', { description: 'Returns an embedded text resource.' }, () => ({
    content: [
      {
        type: 'resource',
        resource: {
          uri: 'test://embedded-resource',
          mimeType: 'text/plain',
          text: 'This is an embedded resource content.',
        },
      },
    ],
  }));
  app.tool(
    'test_multiple_content_types',
    { description: 'Returns text, an image and a resource.' },
    () => ({
      content: [
        text('Multiple content types test:'),
        { type: 'image', data: PNG_BASE64, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: '{"test":"data","value":123}',
          },
        },
      ],
    }),
  );
  app.tool('test_error_handling', { description: 'Always fails with a tool error.' }, () => {
    throw new Error('This tool intentionally returns an error for testing');
  });
}

function registerResources(mcp: McpServer): void {
  mcp.registerResource(
    'static-text',
    'test://static-text',
    { description: 'A static text resource', mimeType: 'text/plain' },
    () => ({
      contents: [
        {
          uri: 'test://static-text',
          mimeType: 'text/plain',
          text: 'This is the content of the static text resource.',
        },
      ],
    }),
  );
  mcp.registerResource(
    'static-binary',
    'test://static-binary',
    { description: 'A static PNG resource', mimeType: 'image/png' },
    () => ({
      contents: [{ uri: 'test://static-binary', mimeType: 'image/png', blob: PNG_BASE64 }],
    }),
  );
  mcp.registerResource(
    'watched-resource',
    'test://watched-resource',
    { description: 'A resource clients may watch', mimeType: 'text/plain' },
    () => ({
      contents: [
        {
          uri: 'test://watched-resource',
          mimeType: 'text/plain',
          text: 'Watched resource content',
        },
      ],
    }),
  );
  mcp.registerResource(
    'template',
    new ResourceTemplate('test://template/{id}/data', { list: undefined }),
    { description: 'A templated JSON resource', mimeType: 'application/json' },
    (uri, variables) => ({
      contents: [
        {
          uri: uri.toString(),
          mimeType: 'application/json',
          text: JSON.stringify({
            id: variables['id'],
            templateTest: true,
            data: `Data for ID: ${String(variables['id'])}`,
          }),
        },
      ],
    }),
  );
}

function registerPrompts(mcp: McpServer): void {
  mcp.registerPrompt('test_simple_prompt', { description: 'A prompt without arguments' }, () => ({
    messages: [{ role: 'user', content: text('This is a simple prompt for testing.') }],
  }));
  mcp.registerPrompt(
    'test_prompt_with_arguments',
    {
      description: 'A prompt with two arguments',
      argsSchema: z.object({
        arg1: completable(z.string(), (value) =>
          ['paris', 'park', 'party'].filter((v) => v.startsWith(value)),
        ),
        arg2: z.string(),
      }),
    },
    ({ arg1, arg2 }) => ({
      messages: [
        { role: 'user', content: text(`Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`) },
      ],
    }),
  );
  mcp.registerPrompt(
    'test_prompt_with_embedded_resource',
    {
      description: 'A prompt embedding a resource',
      argsSchema: z.object({ resourceUri: z.string() }),
    },
    ({ resourceUri }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'resource',
            resource: {
              uri: resourceUri,
              mimeType: 'text/plain',
              text: 'Embedded resource content for testing.',
            },
          },
        },
        { role: 'user', content: text('Please process the embedded resource above.') },
      ],
    }),
  );
  mcp.registerPrompt('test_prompt_with_image', { description: 'A prompt with an image' }, () => ({
    messages: [
      { role: 'user', content: { type: 'image', data: PNG_BASE64, mimeType: 'image/png' } },
      { role: 'user', content: text('Please analyze the image above.') },
    ],
  }));
}

export function registerResourcesAndPrompts(mcp: McpServer): void {
  registerResources(mcp);
  registerPrompts(mcp);
}
