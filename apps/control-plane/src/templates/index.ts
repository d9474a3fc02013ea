/**
 * Templates (issue 23, item 7): the built-in catalogue and a remote one in Dokploy's layout,
 * listed for compose.templates and rendered for compose.deployTemplate. See catalogue.ts.
 */
export {
  builtInTemplates,
  type CatalogueOptions,
  clearTemplateCache,
  InvalidTemplateError,
  listTemplates,
  type RenderedTemplate,
  type RenderTemplateOptions,
  renderTemplate,
  type TemplateContext,
  TemplateNotFoundError,
  type TemplateSummary,
} from "./catalogue.ts";
export { type ImageOverrides, overrideImage, parseImageOverrides } from "./images.ts";
export { checkMountPath, type RenderedDomain, renderTemplateFiles, STACK_VARIABLES } from "./render.ts";
